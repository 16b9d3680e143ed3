"""External solvers' fades (`solver_fades`), recorded when the operator's fallback filled an
order a solver won, with the cooldown they set on the solver; and a solver's run of fades
ended by a fill of its own. The caller owns the transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.fades import NOTHING, OWED, SENDING, FadePenalty
from crossfill.store.db import as_utc
from crossfill.store.tables import Request, Solver, SolverFade

log = structlog.get_logger(__name__)


async def _winner(session: AsyncSession, request: Request) -> Solver | None:
    if request.exclusive_solver is None:
        return None
    query = select(Solver).where(Solver.evm_address == request.exclusive_solver.lower())
    return (await session.scalars(query)).one_or_none()


async def faded(
    session: AsyncSession,
    request: Request,
    *,
    cost: int,
    penalty: FadePenalty,
    now: datetime,
) -> SolverFade | None:
    """The request's winner faded (the fallback filled it): once per request, its run of fades
    grows, its cooldown is set, and the debit of `cost` of its bond is owed. None when it was
    recorded before, or the solver is no longer registered."""
    solver = await _winner(session, request)
    if solver is None:
        log.warning("a fade of a solver no longer registered", request_id=request.id)
        return None
    known = await session.scalar(select(SolverFade).where(SolverFade.request_id == request.id))
    if known is not None:
        return None
    solver.consecutive_fades += 1
    solver.cooldown_until = penalty.cooled_until(
        solver.consecutive_fades,
        now=now,
        running=None if solver.cooldown_until is None else as_utc(solver.cooldown_until),
    )
    solver.updated_at = now
    fade = SolverFade(
        solver_id=solver.id, solver_address=solver.evm_address, request_id=request.id,
        chain_id=request.destination_chain_id,
        currency=request.destination_currency.lower(), cost=str(cost),
        consecutive=solver.consecutive_fades, cooldown_until=solver.cooldown_until,
        state=OWED if cost > 0 else NOTHING, created_at=now,
    )  # fmt: skip
    session.add(fade)
    log.info(
        "a winner faded", solver=solver.name, request_id=request.id, cost=cost,
        consecutive=solver.consecutive_fades, cooldown_until=solver.cooldown_until.isoformat(),
    )  # fmt: skip
    return fade


async def filled_its_own(session: AsyncSession, request: Request, *, now: datetime) -> None:
    """The request's winner filled it: its run of fades is over."""
    solver = await _winner(session, request)
    if solver is not None and solver.consecutive_fades:
        solver.consecutive_fades = 0
        solver.updated_at = now


async def to_debit(session: AsyncSession, chain_id: int) -> list[SolverFade]:
    """The chain's fades whose debit is owed or on its way, oldest first."""
    query = (
        select(SolverFade)
        .where(SolverFade.chain_id == chain_id, SolverFade.state.in_((OWED, SENDING)))
        .order_by(SolverFade.id)
    )
    return list(await session.scalars(query))


async def of_solvers(
    session: AsyncSession, solver_ids: Sequence[int], *, latest: int
) -> dict[int, list[SolverFade]]:
    """Each solver's latest fades, newest first."""
    fades: dict[int, list[SolverFade]] = {solver_id: [] for solver_id in solver_ids}
    query = (
        select(SolverFade)
        .where(SolverFade.solver_id.in_(solver_ids))
        .order_by(SolverFade.id.desc())
    )
    for fade in await session.scalars(query):
        if len(fades[fade.solver_id]) < latest:
            fades[fade.solver_id].append(fade)
    return fades
