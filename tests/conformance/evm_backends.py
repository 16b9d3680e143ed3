"""The EVM chain port's two backends: the in-memory `FakeChain`, and `EvmClient` on an anvil
chain of its own (started by the devnet's launcher, mining only when told), each with a
driver that arranges the chain's state the same way: funded accounts, token balances,
transactions broadcast beside the port, blocks mined, a contract that refuses every call,
and ether a contract pays out in an internal call."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from crossfill.contracts.abi import ERC20, function
from crossfill.devnet import accounts
from crossfill.devnet.anvil import AnvilProcess, anvil_rpc, set_native_balance, start_anvil
from crossfill.devnet.deploy import deploy, signing_web3
from crossfill.kinds.evm.client import InternalTransfer
from crossfill.kinds.evm.port import EvmPort
from crossfill.types import Address
from tests.unit.fake_chain import FakeChain

CHAIN_ID = 31_337
GWEI = 10**9
# What every transaction of the suite offers: anvil's base fee starts at 1 gwei.
MAX_FEE_PER_GAS = 100 * GWEI
PRIORITY_FEE_PER_GAS = GWEI


def signed(
    account: LocalAccount,
    *,
    nonce: int,
    to: str,
    value: int = 0,
    data: bytes = b"",
    gas: int = 100_000,
    max_fee: int = MAX_FEE_PER_GAS,
    tip: int = PRIORITY_FEE_PER_GAS,
) -> bytes:
    """A signed EIP-1559 transaction of the suite's chain."""
    tx: dict[str, Any] = {
        "type": 2, "chainId": CHAIN_ID, "nonce": nonce, "to": to_checksum_address(to),
        "value": value, "data": data, "gas": gas, "maxFeePerGas": max_fee,
        "maxPriorityFeePerGas": tip,
    }  # fmt: skip
    return bytes(account.sign_transaction(tx).raw_transaction)


def new_address() -> str:
    """An account nobody funded (lower case)."""
    account: LocalAccount = Account.create()
    return account.address.lower()


class EvmDriver(Protocol):
    """Arranges a chain's state beside the port under test."""

    @property
    def token(self) -> str:
        """An ERC-20 the chain runs (lower case)."""

    async def funded(self, wei: int) -> LocalAccount:
        """A new account holding `wei`."""

    async def give_tokens(self, holder: str, units: int) -> None:
        """`holder` holds `units` more of `token`, in a mined block."""

    async def submit(self, raw: bytes) -> str:
        """Broadcast a signed transaction (not through the port); its hash."""

    async def mine(self) -> None:
        """Mine one block with the transactions waiting."""

    async def refusing_contract(self, revert_data: bytes) -> str:
        """A contract every call to which reverts with `revert_data`."""

    async def pay_internally(self, to: LocalAccount, wei: int) -> InternalTransfer:
        """A contract pays `wei` to `to` in an internal call, mined; that payment."""


@dataclass
class EvmBackend:
    port: EvmPort
    driver: EvmDriver


@dataclass
class FakeChainDriver:
    chain: FakeChain
    token: str = "0x" + "70" * 20

    async def funded(self, wei: int) -> LocalAccount:
        account: LocalAccount = Account.create()
        self.chain.fund(account.address, wei)
        return account

    async def give_tokens(self, holder: str, units: int) -> None:
        held = self.chain.token_balances[self.token, holder.lower()]
        self.chain.give_tokens(self.token, holder, held + units)
        self.chain.mine_block()

    async def submit(self, raw: bytes) -> str:
        return await self.chain.send_raw(raw)

    async def mine(self) -> None:
        self.chain.mine_block()

    async def refusing_contract(self, revert_data: bytes) -> str:
        contract = new_address()
        self.chain.refuse_calls(contract, revert_data)
        return contract

    async def pay_internally(self, to: LocalAccount, wei: int) -> InternalTransfer:
        """The call into the paying contract is mined as the chain runs any call; the trace
        the node would keep of its payment is put beside it."""
        contract, payee = new_address(), to.address.lower()
        nonce = await self.chain.pending_nonce(payee)
        tx_hash = await self.submit(signed(to, nonce=nonce, to=contract, data=b"\x01"))
        head = self.chain.mine_block()
        self.chain.balances[payee] += wei
        paid = InternalTransfer(tx_hash, contract, payee, wei, head.number, head.hash, 0)
        self.chain.internal_payments.append(paid)
        return paid


@dataclass(frozen=True)
class AnvilChain:
    """A private anvil chain with a test token and WETH, mining only when told."""

    anvil: AnvilProcess
    token: str
    weth: str
    token_owner: LocalAccount


def start_anvil_chain(log_dir: Path) -> Iterator[AnvilChain]:
    anvil = start_anvil(CHAIN_ID, log_dir=log_dir)
    try:
        owner = accounts.deployer()
        web3 = signing_web3(anvil.rpc_url, owner)
        token = deploy(web3, "TestUSDC", Address(owner.address))
        weth = deploy(web3, "WETH")
        anvil_rpc(anvil.rpc_url, "evm_setAutomine", [False])
        yield AnvilChain(anvil, token.lower(), weth.lower(), owner)
    finally:
        anvil.stop()


@dataclass
class AnvilDriver:
    chain: AnvilChain

    @property
    def token(self) -> str:
        return self.chain.token

    def _rpc(self, method: str, *params: object) -> object:
        return anvil_rpc(self.chain.anvil.rpc_url, method, list(params))

    def _nonce(self, account: LocalAccount) -> int:
        counted = self._rpc("eth_getTransactionCount", account.address, "pending")
        return int(str(counted), 16)

    async def funded(self, wei: int) -> LocalAccount:
        account: LocalAccount = Account.create()
        set_native_balance(self.chain.anvil.rpc_url, account.address, wei)
        return account

    async def give_tokens(self, holder: str, units: int) -> None:
        owner = self.chain.token_owner
        mint = function(ERC20, "mint").encode(holder, units)
        await self.submit(signed(owner, nonce=self._nonce(owner), to=self.token, data=mint))
        await self.mine()

    async def submit(self, raw: bytes) -> str:
        return str(self._rpc("eth_sendRawTransaction", "0x" + raw.hex()))

    async def mine(self) -> None:
        self._rpc("evm_mine")

    async def refusing_contract(self, revert_data: bytes) -> str:
        contract = new_address()
        self._rpc("anvil_setCode", contract, "0x" + _refusing_code(revert_data).hex())
        return contract

    async def pay_internally(self, to: LocalAccount, wei: int) -> InternalTransfer:
        """WETH bought and sold back: its `withdraw` pays the ether in an internal call."""
        weth, nonce = self.chain.weth, self._nonce(to)
        deposit = function("WETH", "deposit").encode()
        withdraw = function("WETH", "withdraw").encode(wei)
        await self.submit(signed(to, nonce=nonce, to=weth, value=wei, data=deposit))
        raw = signed(to, nonce=nonce + 1, to=weth, data=withdraw)
        await self.submit(raw)
        await self.mine()
        block = self._rpc("eth_getBlockByNumber", "latest", False)
        assert isinstance(block, dict)
        tx_hash = "0x" + keccak(raw).hex()
        number = int(block["number"], 16)
        return InternalTransfer(tx_hash, weth, to.address.lower(), wei, number, block["hash"], 0)


def _refusing_code(revert_data: bytes) -> bytes:
    """Runtime code that reverts every call with `revert_data` (kept after the code):
    CODECOPY it to memory, then REVERT with it."""
    size = len(revert_data).to_bytes(2, "big")
    prefix_length = 14
    code = (
        b"\x61" + size  # PUSH2 size
        + b"\x60" + bytes([prefix_length])  # PUSH1 offset of the data in the code
        + b"\x60\x00"  # PUSH1 0: to memory 0
        + b"\x39"  # CODECOPY
        + b"\x61" + size  # PUSH2 size
        + b"\x60\x00"  # PUSH1 0
        + b"\xfd"  # REVERT
    )  # fmt: skip
    assert len(code) == prefix_length
    return code + revert_data
