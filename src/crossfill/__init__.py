"""Crossfill: a self-hostable cross-chain intent execution service."""

import os

# eth-hash picks its keccak backend on first use and prefers pycryptodome (installed for
# eth-keyfile), whose per-call overhead makes a hash ~4x slower than safe-pysha3's; keccak runs
# on every quote (order ids, checksummed addresses, signatures). An operator's choice wins.
os.environ.setdefault("ETH_HASH_BACKEND", "pysha3")

__version__ = "0.1.0"
