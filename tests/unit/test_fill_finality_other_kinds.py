"""Whether an order filled off the EVM chains is final for its deposit's repayment: its kind
says so (`KindChain.payment_final`), for the fills recorded paid on that chain; a destination
this process does not serve is never final."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from crossfill.kinds.evm.fill_finality import FillFinality
from crossfill.kinds.port import KindChain
from crossfill.store.repayments import MinedFill, OwedDeposit
from crossfill.store.tables import Deposit
from crossfill.types import ChainId

ORIGIN, SVM, UNSERVED = 900001, 792703809, 42
AT = datetime(2026, 1, 1, tzinfo=UTC)


class FinalOnceAsked:
    """A chain of another kind whose payments are final once `final` holds their reference."""

    def __init__(self) -> None:
        self.final: set[str] = set()
        self.asked: list[str] = []

    async def payment_final(self, reference: str) -> bool:
        self.asked.append(reference)
        return reference in self.final


def _owed(destination: int, *fills: MinedFill) -> OwedDeposit:
    return OwedDeposit(Deposit(chain_id=ORIGIN), "0xrequest", destination, fills)


def _finality(chain: FinalOnceAsked) -> FillFinality:
    return FillFinality({ChainId(SVM): cast(KindChain, chain)}, evm={})


async def test_another_kinds_fill_is_final_when_its_kind_says_so() -> None:
    chain = FinalOnceAsked()
    finality = _finality(chain)
    owed = _owed(SVM, MinedFill(SVM, "sig-1", 10, AT))
    assert finality.looks_final(owed, None)
    assert not await finality.final(owed, None)
    chain.final.add("sig-1")
    assert await finality.final(owed, None)
    assert chain.asked == ["sig-1", "sig-1"]


async def test_without_a_recorded_fill_there_it_is_not_final_and_nothing_is_asked() -> None:
    chain = FinalOnceAsked()
    finality = _finality(chain)
    # A fill recorded on another chain than the order's destination does not count.
    owed = _owed(SVM, MinedFill(ORIGIN, "0xfill", 10, AT))
    assert not finality.looks_final(owed, None)
    assert not await finality.final(owed, None)
    assert chain.asked == []


async def test_a_destination_not_served_here_is_never_final_nor_listed() -> None:
    chain: Any = FinalOnceAsked()
    chain.final.add("sig-2")
    finality = _finality(chain)
    owed = _owed(UNSERVED, MinedFill(UNSERVED, "sig-2", 10, AT))
    assert not finality.looks_final(owed, None)
    assert not await finality.final(owed, None)
    assert finality.serves() == [SVM]
