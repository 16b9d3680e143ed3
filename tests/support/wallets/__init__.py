"""A user's wallet on each kind of chain the service serves: what signs and sends a deposit
(or any payment) the way the user's own wallet would. `evm`: an eth-account key on an EVM
chain; `svm`: a solders keypair on the SVM chain; `perps`: an eth-account key's signed actions
on the perps exchange."""
