"""The SVM kind: each SVM chain of the deployment as the core sees a chain (`kinds.port`):
followed for its height and the vault's balances, listed, checked, quoted to and from an EVM
chain, and watched, paid and refunded by its own workers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from crossfill.domain.key_gas import described
from crossfill.kinds.books_port import BooksReader
from crossfill.kinds.chain_view import ChainLiveStatus
from crossfill.kinds.chain_wire import Chain
from crossfill.kinds.port import (
    ChainContext,
    FollowedChainBase,
    LoopWorkers,
    NamedWorker,
    QuoteRoute,
    SolverBalance,
    WorkerContext,
    solver_balances_of,
)
from crossfill.kinds.svm.books import SvmBooks
from crossfill.kinds.svm.config import SVM_SECTION, svm_chains
from crossfill.kinds.svm.follower import vault_low
from crossfill.kinds.svm.indexer import SvmIndexer
from crossfill.kinds.svm.keys import DevnetSvmKeys, resolve_svm_holder
from crossfill.kinds.svm.payer import SvmPayer
from crossfill.kinds.svm.quote import Direction
from crossfill.kinds.svm.quotes import create_svm_quote, preview_svm_price
from crossfill.kinds.svm.refunder import SvmRefunder
from crossfill.kinds.svm.runtime import SvmChainRuntime, svm_chain_runtime
from crossfill.kinds.svm.solver import SvmSolver
from crossfill.kinds.svm.view import svm_chain_wire
from crossfill.kinds.timed_inventory import TimedInventory
from crossfill.quoting.request import QuoteRequest
from crossfill.runtime import Runtime


@dataclass(frozen=True)
class SvmRoute:
    """A quote to (`to_svm`) or from (`from_svm`) the SVM chain, its other side an EVM chain."""

    chain: SvmChainRuntime
    direction: Direction

    async def quote(
        self, runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None
    ) -> bytes:
        answer = await create_svm_quote(
            runtime, self.chain, request, self.direction, api_key_id=api_key_id
        )
        return orjson.dumps(answer)

    async def price(
        self, runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None
    ) -> dict[str, Any]:
        return preview_svm_price(runtime, self.chain, request, self.direction)


@dataclass
class SvmChain(FollowedChainBase):
    live: SvmChainRuntime
    route_precedence = 1
    # The devnet's keys for `devnet-svm:ROLE` key references (devnet mode only).
    devnet_keys: DevnetSvmKeys | None = None

    async def check(self) -> None:
        """The node says it is healthy (`getHealth`: one behind the cluster says not)."""
        await self.live.client.health()

    async def genesis(self) -> str | None:
        return await self.live.client.genesis_hash()

    def wire(self, live: ChainLiveStatus, *, solver_address: str) -> Chain:
        return svm_chain_wire(self.live.config, live)

    def solver_balances(self) -> Sequence[SolverBalance]:
        return solver_balances_of(self.live.state.solver_balances, self.live.config.currency)

    def low_on_gas(self) -> dict[str, str]:
        """The solver's vault, when its SOL as last read is below `key_gas.minimum_lamports`."""
        low = vault_low(self.live.config, self.live.state)
        if low is None:
            return {}
        sol = self.live.config.native_currency
        return {low.key.role: described(low, symbol=sol.symbol, decimals=sol.decimals)}

    def reserved_inventory(self) -> TimedInventory:
        return self.live.inventory

    def books(self) -> BooksReader:
        return SvmBooks(self.live.config, self.live.client)

    def quote_route(self, request: QuoteRequest) -> QuoteRoute | None:
        if request.destination_chain_id == self.chain_id:
            return SvmRoute(self.live, "to_svm")
        if request.origin_chain_id == self.chain_id:
            return SvmRoute(self.live, "from_svm")
        return None

    async def payment_final(self, reference: str) -> bool:
        """The payment's transaction is finalized (rooted: no fork can drop it), and it
        succeeded."""
        status = await self.live.client.signature_status(reference)
        return status is not None and status.succeeded and status.commitment == "finalized"


@dataclass(frozen=True)
class SvmKind:
    """`devnet_keys`: given by the devnet's command in devnet mode, never in production."""

    devnet_keys: DevnetSvmKeys | None = None
    name = "svm"
    config_section = SVM_SECTION

    def chains(self, context: ChainContext) -> Sequence[SvmChain]:
        return [
            SvmChain(svm_chain_runtime(config, context), self.devnet_keys)
            for config in svm_chains(context.deployment)
        ]

    def workers(self, runtime: Runtime, context: WorkerContext) -> LoopWorkers:
        return LoopWorkers.of_each(runtime, SvmChain, _workers, context)


def _workers(chain: SvmChain, context: WorkerContext) -> Sequence[NamedWorker]:
    """The solver (fills paid from the vault), the indexer (deposits to the vault) and the
    refunder, the solver and the refunder paying through one journalled payer."""
    live, settings = chain.live, context.settings
    vault = resolve_svm_holder(
        live.config.solver, mode=settings.mode, devnet_keys=chain.devnet_keys
    )
    payer = SvmPayer(live.client, vault, context.sessions, now=context.now)
    every = context.ticking(settings.worker_interval_seconds)
    workers = (
        SvmSolver(live, payer, owner=context.owner, **every),
        SvmIndexer(live, **every),
        SvmRefunder(live, payer, **every),
    )
    return [NamedWorker(worker.name, worker.run) for worker in workers]


SVM = SvmKind()
