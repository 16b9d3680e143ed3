"""The devnet perps exchange (chain 1337): the real exchange's `/exchange` and `/info` for
user-signed transfers, over a ledger in its own SQLite file (see docs/perps.md)."""
