"""The money invariant's readers, one module per kind of chain, and the rule that matches what
they read to the service's records (`tests.money_invariant` is the entry)."""
