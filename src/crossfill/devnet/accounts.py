"""Roles on the devnet, as accounts of anvil's public test mnemonic."""

from __future__ import annotations

from eth_account.signers.local import LocalAccount

from crossfill.config.secrets import devnet_account

DEPLOYER_INDEX = 0
SOLVER_INDEX = 1
ALLOCATOR_INDEX = 2
FIRST_USER_INDEX = 3
USER_COUNT = 5
GAS_SPONSOR_INDEX = FIRST_USER_INDEX + USER_COUNT


def deployer() -> LocalAccount:
    return devnet_account(DEPLOYER_INDEX)


def solver() -> LocalAccount:
    return devnet_account(SOLVER_INDEX)


def allocator() -> LocalAccount:
    return devnet_account(ALLOCATOR_INDEX)


def users() -> list[LocalAccount]:
    return [devnet_account(FIRST_USER_INDEX + offset) for offset in range(USER_COUNT)]


def gas_sponsor() -> LocalAccount:
    """Pays the gas of gasless executions (POST /execute) for keys it sponsors."""
    return devnet_account(GAS_SPONSOR_INDEX)
