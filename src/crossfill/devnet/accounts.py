"""Roles on the devnet, as accounts of anvil's public test mnemonic."""

from __future__ import annotations

from dataclasses import dataclass

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


# The peer deployment (`crossfill devnet --peer`): a second, independent Crossfill on the same
# chains, with keys of its own from further along the same public mnemonic (devnet only).
PEER_FIRST_INDEX = 100
PEER_DEPLOYER_INDEX = PEER_FIRST_INDEX
PEER_SOLVER_INDEX = PEER_FIRST_INDEX + 1
PEER_ALLOCATOR_INDEX = PEER_FIRST_INDEX + 2
PEER_GAS_SPONSOR_INDEX = PEER_FIRST_INDEX + 3


@dataclass(frozen=True)
class Roles:
    """The accounts (indexes of the public mnemonic) one deployment on the devnet signs with
    (`devnet_account` of each)."""

    deployer: int
    solver: int
    allocator: int
    gas_sponsor: int


MAIN_ROLES = Roles(DEPLOYER_INDEX, SOLVER_INDEX, ALLOCATOR_INDEX, GAS_SPONSOR_INDEX)
PEER_ROLES = Roles(
    PEER_DEPLOYER_INDEX, PEER_SOLVER_INDEX, PEER_ALLOCATOR_INDEX, PEER_GAS_SPONSOR_INDEX
)
