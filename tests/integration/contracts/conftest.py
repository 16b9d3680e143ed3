"""Contract fixtures: web3 handles on devnet chain 1, signing as each role."""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract
from web3.exceptions import ContractCustomError

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, signing_web3
from crossfill.kinds.evm.config import ChainConfig, evm_chains
from tests.conftest import RunningDevnet


@pytest.fixture(scope="session")
def chain(devnet: RunningDevnet) -> ChainConfig:
    return evm_chains(devnet.deployment)[0]


@pytest.fixture(scope="session")
def web3(chain: ChainConfig) -> Web3:
    return Web3(Web3.HTTPProvider(chain.rpc_url))


def as_account(chain: ChainConfig, account: LocalAccount, name: str, address: str) -> Contract:
    """`name` at `address`, with `transact` signed by `account`."""
    return contract_at(signing_web3(chain.rpc_url, account), name, address)


def usdc_address(chain: ChainConfig) -> str:
    return next(c.address for c in chain.erc20_currencies if c.symbol == "USDC")


def fresh_account(web3: Web3, ether: int = 10) -> LocalAccount:
    """A new funded account, so tests never share nonces or balances."""
    account: LocalAccount = Account.create()
    web3.provider.make_request("anvil_setBalance", [account.address, hex(ether * 10**18)])  # type: ignore[arg-type]
    return account


def error_selector(signature: str) -> str:
    return Web3.keccak(text=signature)[:4].to_0x_hex()


def assert_reverts_with(call: Any, error_signature: str, **tx: Any) -> None:
    """The call, simulated from `tx["from"]`, reverts with the named custom error."""
    with pytest.raises(ContractCustomError) as raised:
        call.call(tx)
    assert str(raised.value.data).startswith(error_selector(error_signature)), raised.value.data


@pytest.fixture(scope="session")
def solver() -> LocalAccount:
    return accounts.solver()


@pytest.fixture(scope="session")
def allocator() -> LocalAccount:
    return accounts.allocator()


@pytest.fixture(scope="session")
def user() -> LocalAccount:
    return accounts.users()[0]
