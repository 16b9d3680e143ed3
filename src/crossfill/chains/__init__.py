"""One client per chain, the live ChainState snapshot, and the followers that keep it fresh."""
