"""Fade debiter, one per EVM chain with a `SolverBond`: takes what each fade cost the operator
out of the faded solver's bond (docs/solvers.md).

A fade (`store.solver_fades`, recorded by the solver when its fallback filled an order a
solver won) owes the debit of its cost, in the order's output currency, on the order's
destination. The allocator (the one `SolverBond` lets debit) sends `SolverBond.debit`
through its own journal on the chain, to the operator's solver key, never more than the bond
holds then (its withdrawal on its way out included); a restart finds the debit journalled and
waits for it rather than sending a second. Once mined, the amount the contract logged
(`Debited`) is recorded and booked as the solver key's (`store.books.fade_debited`).
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog
from eth_utils.address import to_checksum_address

from crossfill.contracts import calldata
from crossfill.contracts.events import decode_events
from crossfill.domain.fades import DEBITED, NOTHING, REFUSED, SENDING
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.solver_bonds import bond_of
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import each_on_its_own
from crossfill.store import books, solver_fades
from crossfill.store.tables import Request, SolverFade

log = structlog.get_logger(__name__)
PURPOSE = "fade-debit"


@dataclass(eq=False)
class FadeDebiter(JournalledWorker):
    """`txmanager` is the allocator's on this chain; `pay_to`, the operator's solver key."""

    job = "fade-debiter"
    pay_to: str

    async def tick(self) -> None:
        bond = self.config.contracts.solver_bond
        if bond is None:
            return
        async with self.sessions() as session:
            fades = await solver_fades.to_debit(session, self.config.id)
        if not fades:
            return
        await self.txmanager.hold_signer()
        await each_on_its_own(self.name, fades, self._debit, label=lambda fade: str(fade.id))

    async def _debit(self, fade: SolverFade) -> None:
        attempt = await self.txmanager.attempt(fade.request_id, PURPOSE)
        if isinstance(attempt, InFlight):
            return
        if isinstance(attempt, Mined):
            await self._settle(fade.id, attempt.row.tx_hash, attempt.receipt)
            return
        async with self.sessions() as session:
            request = await session.get(Request, fade.request_id)
        assert request is not None
        held = await self._held(fade.solver_address, fade.currency)
        amount = min(int(fade.cost), held)
        if amount <= 0:
            await self._record(fade.id, NOTHING, debited=0)
            return
        data = calldata.solver_bond_debit(
            to_checksum_address(fade.solver_address),
            to_checksum_address(fade.currency),
            amount,
            to_checksum_address(self.pay_to),
            bytes.fromhex(request.order_id[2:]),
        )
        bond = self._bond
        sent = await self.txmanager.send(
            to=bond, data=data, value=0, gas_limit=await self.gas_for(bond, data),
            purpose=PURPOSE, request_id=fade.request_id,
        )  # fmt: skip
        await self._record(fade.id, SENDING, tx_hash=sent.tx_hash)

    @property
    def _bond(self) -> str:
        bond = self.config.contracts.solver_bond
        assert bond is not None
        return bond

    async def _held(self, solver: str, currency: str) -> int:
        """What the bond holds of the solver's now, with its withdrawal on its way out."""
        bonded = await bond_of(self.chain.client, self._bond, solver, currency)
        returned = await self.chain.client.call(
            self._bond, calldata.solver_bond_pending(solver, currency)
        )
        return bonded + calldata.pending_answer(returned)

    async def _settle(self, fade_id: int, tx_hash: str, receipt: dict[str, object]) -> None:
        if receipt["status"] != 1:
            await self._record(fade_id, REFUSED, tx_hash=tx_hash)
            log.warning("a fade's debit reverted", fade_id=fade_id, tx_hash=tx_hash)
            return
        logs = receipt["logs"]
        assert isinstance(logs, list)
        debited = sum(
            int(event.args["amount"])
            for event in decode_events(logs, "SolverBond", "Debited")
            if event.address == self._bond.lower()
        )
        await self._record(fade_id, DEBITED, debited=debited, tx_hash=tx_hash)

    async def _record(
        self, fade_id: int, state: str, *, debited: int | None = None, tx_hash: str | None = None
    ) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            fade = await session.get(SolverFade, fade_id)
            assert fade is not None
            fade.state = state
            if tx_hash is not None:
                fade.tx_hash = tx_hash
            if debited is not None:
                fade.debited = str(debited)
            if state in (DEBITED, NOTHING, REFUSED):
                fade.settled_at = now
            if state == DEBITED and debited:
                await books.fade_debited(session, fade, self.pay_to, now=now)
        if state == DEBITED:
            log.info("a fade debited", fade_id=fade_id, amount=debited, tx_hash=tx_hash)
