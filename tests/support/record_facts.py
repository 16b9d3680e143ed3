"""A request's record facts around a quote's wire answer, for tests of the records and of
what is read from them (the timeline, the fees): the quote fixture's user and solver, quoted
at 2026-11-22T12:00:00Z, with the transactions given."""

from __future__ import annotations

from typing import Any

from crossfill.domain.record_facts import RecordFacts, SolverFacts, TxFacts
from tests.support import quote_fixtures as fx

REQUEST_ID = "0x" + "01" * 32
CREATED_AT = "2026-11-22T12:00:00.000Z"


def facts_of(
    wire: dict[str, Any], status: str, *transactions: TxFacts, **extra: Any
) -> RecordFacts:
    """`extra`: `fail_reason`, `refund_fail_reason`, `deposit_address`, `currencies`."""
    details = wire["details"]
    return RecordFacts(
        request_id=REQUEST_ID,
        status=status,
        user=fx.USER,
        recipient=fx.USER,
        refund_to=fx.USER,
        request_type="Bridge",
        features=(),
        fail_reason=extra.get("fail_reason"),
        refund_fail_reason=extra.get("refund_fail_reason"),
        amount_out=int(details["currencyOut"]["amount"]),
        minimum_amount_out=int(details["currencyOut"]["minimumAmount"]),
        deposit_address=extra.get("deposit_address"),
        referrer=None,
        quote=wire,
        solver=SolverFacts(fx.SOLVER, "crossfill-devnet-2", fx.CHAINS[1]),
        transactions=transactions,
        created_at=CREATED_AT,
        updated_at="2026-11-22T12:00:05.000Z",
        currencies=extra.get("currencies", {}),
    )
