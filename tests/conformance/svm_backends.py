"""The SVM chain port's two backends: the in-memory `FakeSvm`, and `SvmClient` against the
devnet's LiteSVM node (started and seeded per module as `tests/integration/svm` does, short
slots and a short blockhash window), each with a driver that arranges the chain's state the
same way: lamports airdropped, tokens of the seeded mint, the chain moved on."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from crossfill.devnet.svm import accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm, send
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.client import SvmPort
from tests.support.wallets.svm import rpc
from tests.unit.fake_svm import FakeSvm

# The fake's faucet, as the node's airdrops come from one.
FAUCET = Keypair().pubkey()


class SvmDriver(Protocol):
    """Arranges a chain's state beside the port under test."""

    @property
    def mint(self) -> Pubkey:
        """A token mint the chain runs."""

    async def airdrop(self, to: Pubkey, lamports: int) -> str:
        """`to` is paid `lamports` in a transaction that lands; its signature."""

    async def give_tokens(self, owner: Pubkey, units: int) -> None:
        """`owner`'s associated account of `mint` is opened and credited `units`."""

    async def advance(self, blocks: int) -> None:
        """The chain's block height moves on by `blocks` at least."""

    def refuse_next_send(self) -> None:
        """The next transaction sent is refused by its program. A real chain needs no telling
        (the suite overdraws an account); the fake runs no program and is told."""


@dataclass
class SvmBackend:
    port: SvmPort
    driver: SvmDriver


@dataclass
class FakeSvmDriver:
    chain: FakeSvm
    mint: Pubkey

    async def airdrop(self, to: Pubkey, lamports: int) -> str:
        self.chain.fund(to, self.chain.lamports.get(to, 0) + lamports)
        return self.chain.land([programs.transfer_sol(FAUCET, to, lamports)], FAUCET)

    async def give_tokens(self, owner: Pubkey, units: int) -> None:
        self.chain.give_tokens(owner, self.mint, units)

    async def advance(self, blocks: int) -> None:
        self.chain.height += blocks

    def refuse_next_send(self) -> None:
        self.chain.on_send = "refuse"


@dataclass
class DevnetSvmDriver:
    node: SvmNodeProcess
    seeded: SeededSvm

    @property
    def mint(self) -> Pubkey:
        return self.seeded.usdc_mint

    async def airdrop(self, to: Pubkey, lamports: int) -> str:
        return str(rpc(self.node.rpc_url, "requestAirdrop", str(to), lamports))

    async def give_tokens(self, owner: Pubkey, units: int) -> None:
        authority = accounts.mint_authority()
        opened = programs.create_token_account(authority.pubkey(), owner, self.mint)
        minted = programs.mint_to(
            self.mint, programs.token_account(owner, self.mint), authority.pubkey(), units
        )
        send(self.node.rpc_url, [opened, minted], [authority])

    async def advance(self, blocks: int) -> None:
        target = self._height() + blocks
        for _ in range(blocks * 20 + 100):  # slots come every 100 ms (the node's options)
            if self._height() >= target:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"the node did not reach block height {target}")

    def _height(self) -> int:
        return int(rpc(self.node.rpc_url, "getBlockHeight"))

    def refuse_next_send(self) -> None:
        return None
