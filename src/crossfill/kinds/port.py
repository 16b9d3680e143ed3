"""What the core asks of a kind of chain (the EVM chains, the SVM chain, the perps exchange).

A kind (`ChainKind`) builds, from the deployment, one `KindChain` per chain of its own. The
runtime keeps every chain of every kind in one map (`Runtime.kind_chains`: chain id → its
`KindChain`), and the core iterates it: `/chains` lists each chain's record, `/readyz` runs its
check, the process follows its head, and a quote goes to the kind whose chain is one of its
sides; the workers' composition starts each kind's workers (`ChainKind.workers`). The kinds
themselves are listed once, in `kinds.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypedDict, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.config.sections import ConfigSection
from crossfill.domain.inventory import Amounts, Inventory, Landed
from crossfill.kinds.books_port import BooksReader
from crossfill.kinds.chain_view import ChainLiveStatus
from crossfill.kinds.chain_wire import Chain
from crossfill.metrics import Metrics
from crossfill.quoting.request import QuoteRequest
from crossfill.settings import Settings
from crossfill.types import ChainId

if TYPE_CHECKING:
    from crossfill.config import Deployment
    from crossfill.runtime import Runtime


@dataclass(frozen=True)
class ChainContext:
    """What every kind's chains are built with: the deployment, the settings, the process's
    monotonic clock and its metrics."""

    deployment: Deployment
    settings: Settings
    clock: Callable[[], float]
    metrics: Metrics


class Ticking(TypedDict):
    """What a kind's worker loop is built with (`workers.kind_worker.KindWorker`): the store's
    sessions, the clock, and how long it waits between ticks."""

    sessions: async_sessionmaker[AsyncSession]
    now: Callable[[], datetime]
    interval_seconds: float


@dataclass(frozen=True)
class WorkerContext:
    """What every kind's workers are built with."""

    sessions: async_sessionmaker[AsyncSession]
    settings: Settings
    # This process among every other: the holder of the leases its workers take.
    owner: str
    now: Callable[[], datetime]
    metrics: Metrics

    @property
    def signer_lease(self) -> timedelta:
        """How long a signer lease lasts unrenewed (`store.signer_leases`)."""
        return timedelta(seconds=self.settings.signer_lease_seconds)

    def ticking(self, interval_seconds: float) -> Ticking:
        """A worker loop's sessions and clock, ticking every `interval_seconds`."""
        return Ticking(sessions=self.sessions, now=self.now, interval_seconds=interval_seconds)


@dataclass(frozen=True)
class NamedWorker:
    """A long-running worker loop, and the name of its task (`<job>-<chain id>`)."""

    name: str
    run: Callable[[], Coroutine[Any, Any, None]]


class QuoteRoute(Protocol):
    """A kind's answers to a quote whose route crosses one of its chains."""

    async def quote(
        self, runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None
    ) -> bytes:
        """The quote's JSON answer, its request stored."""

    async def price(
        self, runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None
    ) -> dict[str, Any]:
        """POST /price: the quote's fees and details, nothing stored."""


@dataclass(frozen=True)
class SolverBalance:
    """The solver's balance of one currency on a chain, as the service last read it."""

    symbol: str
    amount: int  # smallest units
    decimals: int


class _Currency(Protocol):
    @property
    def symbol(self) -> str: ...

    @property
    def decimals(self) -> int: ...


def solver_balances_of(
    balances: Mapping[str, int], currency: Callable[[str], _Currency | None]
) -> list[SolverBalance]:
    """`balances` (currency address -> amount) of the configured currencies (`currency`: the
    configured one at an address), by symbol."""
    shown = []
    for address, amount in balances.items():
        configured = currency(address)
        if configured is not None:
            shown.append(SolverBalance(configured.symbol, amount, configured.decimals))
    return sorted(shown, key=lambda balance: balance.symbol)


@dataclass(frozen=True)
class InventoryCurrency:
    """A currency of a chain's inventory: its key in the chain's balances, its symbol and its
    decimals."""

    key: str
    symbol: str
    decimals: int


class ReservedInventory(Protocol):
    """The solver's inventory on one chain as this process keeps it (`domain.inventory`): its
    balances as last read, and what the orders in flight commit of them, which
    `app.inventory` reads from the store and hands it (`hold`)."""

    def key(self, currency: str) -> str:
        """How the chain's balances key `currency` (as a request row stores it)."""

    def landed_mark(self, fill_block: int) -> float:
        """Where a fill recorded mined in `fill_block` (as its kind records it) was paid, as
        `read_mark` places the balance reads: a block, or the process's clock now."""

    def read_mark(self, key: str) -> float:
        """Where the balance of `key` as last read was read (-inf: never)."""

    def hold(
        self,
        in_flight: Amounts,
        landed: Sequence[Landed],
        owed: Amounts | None,
        in_transit: Amounts | None,
    ) -> None:
        """What is committed now: the outputs of the orders in flight (`in_flight`) and of
        those filled since (`landed`, until the balances are read after them); what is owed
        and in transit, when read (None: as before)."""

    def listed(self) -> Sequence[tuple[InventoryCurrency, Inventory | None]]:
        """Each configured currency and its inventory (None while its balance is not read)."""

    async def free(self, currency: str) -> int | None:
        """What a new order may take of `currency` now (never below 0; None while its balance
        is not known). Raises `ChainError` when a kind reading it on demand cannot."""


class KindChain(Protocol):
    """One configured chain of some kind, live in this process."""

    def reserved_inventory(self) -> ReservedInventory:
        """The solver's inventory here, kept from the store for quotes, `/config/v2` and the
        bridge limits (`app.inventory`)."""

    @property
    def chain_id(self) -> ChainId: ...

    @property
    def configured_disabled(self) -> bool:
        """Whether the deployment file disables the chain (an operator may override it)."""

    @property
    def status_message(self) -> str | None:
        """The operator's message about the chain, from the deployment file."""

    def read_failing(self) -> bool:
        """Whether the service's last read of the chain failed."""

    def lagging(self, now: float) -> bool:
        """Whether the chain's head has not advanced for longer than its threshold."""

    async def follow_once(self) -> None:
        """Read the chain's head and the solver's balances there once (a failure is recorded,
        never raised)."""

    def following(self) -> Coroutine[Any, Any, None] | None:
        """The loop that keeps following the chain, if its kind follows one."""

    async def check(self) -> None:
        """`/readyz`: raises `ChainError` unless the endpoint serves this chain."""

    def wire(self, live: ChainLiveStatus, *, solver_address: str) -> Chain:
        """The chain's `/chains` record."""

    def solver_balances(self) -> Sequence[SolverBalance]:
        """The solver's balances there as last read (none where its kind reads them only when
        a quote needs them)."""

    async def genesis(self) -> str | None:
        """What names the chain's history (its genesis block's hash), which the stored state
        is bound to at start (`workers.genesis`); None for a kind without one (the exchange).
        Raises `ChainError` when the chain does not answer."""

    def solver_shortfall(self) -> dict[str, str]:
        """`/readyz`: what the solver's balance here lacks for the fills waiting on it, in
        whole units by currency symbol, as this process last found (empty: nothing)."""

    def low_on_gas(self) -> dict[str, str]:
        """`/readyz`, `/chains`: the keys the service sends from here that are below their
        minimum gas balance and are not being topped up, by role (`solver`,
        `gasless-sponsor-N`), each with its balance, minimum and why (empty: none)."""

    def rebalancing(self) -> dict[str, str]:
        """`/readyz`, `/chains`: what keeps the rebalancer from refilling the solver's
        inventory here, in words by currency symbol, as this process last found (empty:
        nothing, or no rebalancer for this chain)."""

    def quote_route(self, request: QuoteRequest) -> QuoteRoute | None:
        """Who answers a quote with this chain as one of its sides (None: the EVM planner)."""

    async def payment_final(self, reference: str) -> bool:
        """Whether a payment of the solver's here, recorded paid under `reference` (a fill's
        transaction), can no longer be undone: an EVM deposit for its order is then repaid to
        the solver. Raises `ChainError` when the chain does not answer."""

    @property
    def route_precedence(self) -> int:
        """When both sides are chains whose kinds quote them, the lower answers."""

    def books(self) -> BooksReader | None:
        """The chain's side of its books' reconciliation (`kinds.books_port`); None for a
        chain whose kind keeps no books."""

    async def close(self) -> None: ...


ChainOfKind = TypeVar("ChainOfKind", bound=KindChain)


class KindWorkers(Protocol):
    """A kind's workers in this process: what watches, pays and refunds on its chains."""

    def listen(self) -> Sequence[Callable[[], None]]:
        """Attach the workers woken by a chain's new heads; the removals of those listeners."""

    def loops(self) -> Sequence[NamedWorker]:
        """The long-running loops to start."""

    def hint(self, chain_id: int, tx_hash: str, client: str) -> bool:
        """A client's word that `tx_hash` deposits on `chain_id`: whether a worker took it."""


@dataclass(frozen=True)
class LoopWorkers:
    """Workers that are loops only: no head listeners, no deposit hints."""

    named: Sequence[NamedWorker]

    @classmethod
    def of_each(
        cls,
        runtime: Runtime,
        kind: type[ChainOfKind],
        build: Callable[[ChainOfKind, WorkerContext], Iterable[NamedWorker]],
        context: WorkerContext,
    ) -> LoopWorkers:
        """The loops `build` makes for each of the runtime's chains of type `kind`."""
        chains = [chain for chain in runtime.kind_chains.values() if isinstance(chain, kind)]
        return cls([worker for chain in chains for worker in build(chain, context)])

    def listen(self) -> Sequence[Callable[[], None]]:
        return ()

    def loops(self) -> Sequence[NamedWorker]:
        return self.named

    def hint(self, chain_id: int, tx_hash: str, client: str) -> bool:
        return False


class LiveConfig(Protocol):
    @property
    def id(self) -> ChainId: ...

    @property
    def name(self) -> str: ...

    @property
    def disabled(self) -> bool: ...

    @property
    def status_message(self) -> str | None: ...


class LiveState(Protocol):
    @property
    def last_error(self) -> str | None: ...

    def lagging(self, now: float) -> bool: ...


class LiveClient(Protocol):
    async def close(self) -> None: ...


class Live(Protocol):
    """A chain live in this process, as every kind keeps one: its config, its state and its
    client."""

    @property
    def config(self) -> LiveConfig: ...

    @property
    def state(self) -> LiveState: ...

    @property
    def client(self) -> LiveClient: ...


LiveConfigT = TypeVar("LiveConfigT", bound=LiveConfig)
LiveClientT = TypeVar("LiveClientT", bound=LiveClient)
LiveStateT = TypeVar("LiveStateT", bound=LiveState)


@dataclass
class LiveChain(Generic[LiveConfigT, LiveClientT, LiveStateT]):
    """A chain live in this process (`Live`), as a kind keeps it: its config, its client and
    its state; each kind adds what else it keeps of it."""

    config: LiveConfigT
    client: LiveClientT
    state: LiveStateT


class KindChainBase:
    """What every `KindChain` answers the same way, from its live chain's config, state and
    client."""

    live: Live

    @property
    def chain_id(self) -> ChainId:
        return self.live.config.id

    @property
    def configured_disabled(self) -> bool:
        return self.live.config.disabled

    @property
    def status_message(self) -> str | None:
        return self.live.config.status_message

    def read_failing(self) -> bool:
        return self.live.state.last_error is not None

    def lagging(self, now: float) -> bool:
        return self.live.state.lagging(now)

    async def genesis(self) -> str | None:
        return None

    def solver_shortfall(self) -> dict[str, str]:
        return {}

    def low_on_gas(self) -> dict[str, str]:
        return {}

    def rebalancing(self) -> dict[str, str]:
        return {}

    def books(self) -> BooksReader | None:
        return None

    async def close(self) -> None:
        await self.live.client.close()


class LiveFollower(Protocol):
    async def update(self) -> None: ...

    async def run(self) -> None: ...


class FollowedLive(Live, Protocol):
    """A live chain whose head its follower keeps."""

    @property
    def follower(self) -> LiveFollower: ...


class FollowedChainBase(KindChainBase):
    """A `KindChain` whose head a follower of its own keeps (the EVM and SVM chains)."""

    live: FollowedLive

    async def follow_once(self) -> None:
        await self.live.follower.update()

    def following(self) -> Coroutine[Any, Any, None]:
        return self.live.follower.run()


class ChainKind(Protocol):
    """A kind of chain: how its chains are built from the deployment, and its workers."""

    name: str

    @property
    def config_section(self) -> ConfigSection[Any]:
        """The kind's own section of the deployment file (`config.sections`)."""
        ...

    def workers(self, runtime: Runtime, context: WorkerContext) -> KindWorkers: ...

    def chains(self, context: ChainContext) -> Sequence[KindChain]: ...
