"""The operator's view: each chain's health (its `/chains` status beside its `/readyz` check),
the solver's balances there, the queues (requests waiting for a deposit or a fill, deposits
due for refund or kept) and the webhook deliveries that failed for good."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crossfill.api.routes.chains import live_records
from crossfill.api.routes.health import ReadinessChecks, readiness
from crossfill.app.operator_overview import StoredOverview, stored_overview
from crossfill.domain.money import format_units
from crossfill.errors import StoreError
from crossfill.runtime import Runtime
from crossfill.types import ChainId


@dataclass(frozen=True)
class Balance:
    symbol: str
    amount: str  # whole units, formatted
    shortfall: str | None  # what it lacks for the fills waiting on it


@dataclass(frozen=True)
class ChainHealth:
    chain_id: int
    name: str
    kind: str
    check: str  # "ok", "disabled" or what the readiness check found
    disabled: bool
    lagging: bool
    deposits_enabled: bool
    status_message: str | None
    balances: Sequence[Balance]
    refunds_due: int

    @property
    def healthy(self) -> bool:
        return self.check == "ok" and not self.lagging and not self.disabled


@dataclass(frozen=True)
class OperatorView:
    database: str
    problems: Sequence[str]
    chains: Sequence[ChainHealth]
    stored: StoredOverview


def _balances(runtime: Runtime, chain_id: int, shortfalls: dict[str, str]) -> list[Balance]:
    chain = runtime.kind_chains[ChainId(chain_id)]
    return [
        Balance(
            balance.symbol,
            format_units(balance.amount, balance.decimals),
            shortfalls.get(balance.symbol),
        )
        for balance in chain.solver_balances()
    ]


async def operator_view(runtime: Runtime, checks: ReadinessChecks) -> OperatorView:
    async with runtime.sessions() as session:
        stored = await stored_overview(session)
    records = await live_records(runtime)
    try:
        ready = await readiness(runtime, checks)
    except StoreError as exc:  # the write probe's database went away since the read above
        database, results, shortfalls, problems = str(exc), {}, {}, [str(exc)]
    else:
        database, results, shortfalls = ready.database, ready.chains, ready.shortfalls
        problems = ready.problems
    chains = [
        ChainHealth(
            chain_id=record.id,
            name=record.displayName,
            kind=record.vmType,
            check=results.get(record.id, "disabled" if record.disabled else "not checked"),
            disabled=record.disabled,
            lagging=record.blockProductionLagging,
            deposits_enabled=record.depositEnabled,
            status_message=record.statusMessage,
            balances=_balances(runtime, record.id, shortfalls.get(str(record.id), {})),
            refunds_due=stored.refunds_due.get(record.id, 0),
        )
        for record in records
    ]
    return OperatorView(database, problems, chains, stored)
