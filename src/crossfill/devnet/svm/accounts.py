"""Roles on the devnet SVM chain: keypairs derived from public, fixed seeds (devnet only)."""

from __future__ import annotations

import hashlib

from solders.keypair import Keypair

USER_COUNT = 5
USDC_DECIMALS = 6


def _keypair(role: str) -> Keypair:
    return Keypair.from_seed(hashlib.sha256(f"crossfill devnet svm {role}".encode()).digest())


def solver() -> Keypair:
    """The solver: its account is the vault deposits go to and fills are paid from."""
    return _keypair("solver")


def mint_authority() -> Keypair:
    return _keypair("mint authority")


def usdc_mint() -> Keypair:
    return _keypair("usdc mint")


def users() -> list[Keypair]:
    return [_keypair(f"user {index}") for index in range(USER_COUNT)]


def by_role(role: str) -> Keypair:
    """A role by the name a `devnet-svm:ROLE` key reference gives it."""
    return _keypair(role)
