"""Carrying out a quote's steps: each kind of item (`evm`, `svm`, `exchange`, `signatures`)
and the loop over them (`runner`)."""
