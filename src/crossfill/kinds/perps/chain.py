"""The perps exchange as the core sees a chain (`kinds.port`): listed, checked, quoted (deposits
to it from an EVM chain, withdrawals from it to one), and served by its solver, the watcher of
transfers in and their refunder. It has no head to follow."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from crossfill.config.secrets import resolve_holder
from crossfill.domain.key_gas import described
from crossfill.kinds.books_port import BooksReader
from crossfill.kinds.chain_view import ChainLiveStatus
from crossfill.kinds.chain_wire import Chain
from crossfill.kinds.perps.books import PerpsBooks
from crossfill.kinds.perps.config import PERPS_SECTION, perps_exchange
from crossfill.kinds.perps.fee_watch import PerpsFeeWatch, account_low
from crossfill.kinds.perps.inventory import PerpsInventory
from crossfill.kinds.perps.payer import PerpsPayer
from crossfill.kinds.perps.quotes import create_perps_deposit_quote
from crossfill.kinds.perps.refunder import PerpsRefunder
from crossfill.kinds.perps.runtime import PerpsRuntime, perps_runtime
from crossfill.kinds.perps.solver import PerpsSolver
from crossfill.kinds.perps.view import perps_chain_wire
from crossfill.kinds.perps.watcher import PerpsWatcher
from crossfill.kinds.perps.withdrawal_quotes import create_perps_withdrawal_quote
from crossfill.kinds.port import (
    ChainContext,
    KindChainBase,
    LoopWorkers,
    NamedWorker,
    QuoteRoute,
    SolverBalance,
    WorkerContext,
)
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from crossfill.runtime import Runtime


class QuoteCreator(Protocol):
    """A use case that quotes a route to or from the exchange, its answer as JSON."""

    async def __call__(
        self,
        runtime: Runtime,
        exchange: PerpsRuntime,
        body: QuoteRequest,
        *,
        api_key_id: int | None = None,
    ) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ExchangeRoute:
    """A route with the exchange as one side, quoted by `create`: deposits to the user's
    exchange account from an EVM chain's Depository, or withdrawals from it to an EVM chain."""

    exchange: PerpsRuntime
    create: QuoteCreator

    async def quote(
        self, runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None
    ) -> bytes:
        answer = await self.create(runtime, self.exchange, request, api_key_id=api_key_id)
        return orjson.dumps(answer)

    async def price(
        self, runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None
    ) -> dict[str, Any]:
        raise QuoteError(
            "UNSUPPORTED_ROUTE", "/price does not preview perps-exchange routes; ask /quote/v2"
        )


@dataclass
class PerpsChain(KindChainBase):
    live: PerpsRuntime
    route_precedence = 0

    async def follow_once(self) -> None:
        """An exchange has no head: its balances are read when a quote needs them."""

    def following(self) -> None:
        return None

    async def check(self) -> None:
        """The exchange answers its token list."""
        await self.live.client.spot_meta()

    def wire(self, live: ChainLiveStatus, *, solver_address: str) -> Chain:
        return perps_chain_wire(self.live.config, live)

    def solver_balances(self) -> Sequence[SolverBalance]:
        """Read from the exchange when a quote or a payment needs them, not kept."""
        return ()

    def low_on_gas(self) -> dict[str, str]:
        """The solver's account, when what it holds for the exchange's fees (as its fee watch
        last read it) is below `key_gas.minimum`."""
        low = account_low(self.live)
        if low is None:
            return {}
        currency = self.live.config.fee_currency()
        shown = described(low, symbol=currency.symbol, decimals=currency.decimals)
        return {low.key.role: shown}

    def reserved_inventory(self) -> PerpsInventory:
        return self.live.inventory

    def books(self) -> BooksReader:
        return PerpsBooks(self.live.config, self.live.client)

    async def payment_final(self, reference: str) -> bool:
        """A transfer is recorded paid only once the exchange's ledger shows it, and its
        ledger takes nothing back."""
        return True

    def quote_route(self, request: QuoteRequest) -> QuoteRoute | None:
        if request.destination_chain_id == self.chain_id:
            return ExchangeRoute(self.live, create_perps_deposit_quote)
        if request.origin_chain_id == self.chain_id:
            return ExchangeRoute(self.live, create_perps_withdrawal_quote)
        return None


class PerpsKind:
    name = "perps"
    config_section = PERPS_SECTION

    def chains(self, context: ChainContext) -> Sequence[PerpsChain]:
        exchange = perps_exchange(context.deployment)
        if exchange is None:
            return []
        return [PerpsChain(perps_runtime(exchange, context))]

    def workers(self, runtime: Runtime, context: WorkerContext) -> LoopWorkers:
        return LoopWorkers.of_each(runtime, PerpsChain, _workers, context)


def _workers(chain: PerpsChain, context: WorkerContext) -> Sequence[NamedWorker]:
    """The solver (deposits to the exchange), the watcher and the refunder (withdrawals
    from it), all paying from the solver's exchange account through one payer: its journal
    holds every action that account signs; and the watch of what that account keeps for the
    exchange's fees."""
    exchange, settings = chain.live, context.settings
    account = resolve_holder(
        exchange.config.solver,
        "perps.solver",
        mode=settings.mode,
        keystore_password=settings.keystore_password,
    )
    payer = PerpsPayer(exchange.client, exchange.config, account, context.sessions, now=context.now)
    poll = exchange.config.poll_interval_seconds
    every = context.ticking(min(settings.worker_interval_seconds, poll))
    workers = (
        PerpsSolver(exchange, payer, owner=context.owner, **every),
        # Its every tick reads the exchange: its own cadence.
        PerpsWatcher(exchange, **context.ticking(poll)),
        PerpsRefunder(exchange, payer, **every),
        PerpsFeeWatch(exchange, metrics=context.metrics, **every),
    )
    return [NamedWorker(worker.name, worker.run) for worker in workers]


PERPS = PerpsKind()
