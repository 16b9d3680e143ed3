"""What every kind of chain shows the checker, and the one rule that matches it to the records:
each deposit has exactly one outcome, and each fill or payout out of the service's hands is
matched by a deposit (`account`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from crossfill.store.tables import Deposit, Request
from tests.money.records import DepositKey, Records


@dataclass(frozen=True)
class ChainDeposit:
    """A deposit as its chain shows it."""

    chain_id: int
    tx_hash: str
    log_index: int
    order_id: str  # "" when the chain names none (the exchange's transfers carry only a nonce)
    depositor: str
    currency: str
    amount: int
    via_receiver: bool = False

    @property
    def key(self) -> DepositKey:
        return (self.chain_id, self.tx_hash, self.log_index)

    def __str__(self) -> str:
        return f"{self.chain_id}:{self.tx_hash}:{self.log_index} ({self.amount} of {self.currency})"


@dataclass(frozen=True)
class Shown:
    """What a chain shows, once the records say which of its payments are fills."""

    # Order id -> fills of it that pay what its request quoted.
    fills: Counter[str] = field(default_factory=Counter)
    # Payments out of the service's hands that only a refund (or an app-fee claim) explains.
    payouts: set[str] = field(default_factory=set)
    # What the chain shows that no record can explain (a fill paying another amount).
    broken: list[str] = field(default_factory=list)


class ChainLedger(Protocol):
    """One chain, read since the check's start: an EVM chain, an SVM vault, the exchange."""

    deposits: list[ChainDeposit]

    def shown(self, records: Records) -> Shown: ...

    def refund_paid(self, deposit: ChainDeposit, part: Deposit, records: Records) -> int | None:
        """What the recorded refund paid back in the deposit's currency, read from the chain;
        None when it is no successful payment of it from the service's account."""

    def paid_back_too(self, deposit: ChainDeposit, part: Deposit) -> bool:
        """Whether the chain shows the part paid back although the records do not say so
        (the chains whose every payout is matched below need not tell)."""


@dataclass
class MoneyReport:
    deposits: int = 0
    filled: int = 0
    refunded: int = 0
    kept: int = 0
    # Filled deposits paid on to the solver out of the Depository (still counted filled: a
    # repaid deposit is no longer escrow owed, and not lost either).
    repaid: int = 0
    # Outcomes the checker cannot read (a fill on a chain outside the deployment it was given):
    # taken from the records.
    taken_from_records: int = 0
    # Not ended yet: a fill or a refund on its way.
    unsettled: list[str] = field(default_factory=list)
    # Broken: a unit with no outcome or two, a fill or payout with no deposit.
    unaccounted: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.deposits} deposits: {self.filled} filled ({self.repaid} repaid to the "
            f"solver), {self.refunded} refunded, {self.kept} kept "
            f"({self.taken_from_records} fills taken from records); "
            f"{len(self.unsettled)} unsettled, {len(self.unaccounted)} unaccounted"
        )


class Kind(Enum):
    FILLED = "filled"
    FILLED_PER_RECORDS = "filled (records)"
    REFUNDED = "refunded"
    KEPT = "kept"
    UNSETTLED = "unsettled"
    BROKEN = "broken"


@dataclass(frozen=True)
class Outcome:
    kind: Kind
    detail: str = ""
    order_id: str = ""  # the order a fill paid
    repaid: bool = False  # a filled deposit paid on to the solver


def account(ledgers: Mapping[int, ChainLedger], records: Records, report: MoneyReport) -> None:
    """Every deposit the ledgers show matched by exactly one outcome; every fill and payout
    they show matched by a deposit."""
    shown = {chain_id: ledger.shown(records) for chain_id, ledger in ledgers.items()}
    fills: Counter[str] = Counter()
    for seen in shown.values():
        fills.update(seen.fills)
        report.unaccounted += seen.broken
    judge = _PartJudge(ledgers, records, fills)
    paid_orders: Counter[str] = Counter()
    refund_txs: set[str] = set()
    for ledger in ledgers.values():
        report.deposits += len(ledger.deposits)
        for deposit in ledger.deposits:
            parts = records.parts.get(deposit.key, [])
            for outcome, where in _outcomes(deposit, parts, judge):
                _count(outcome, where, report, paid_orders)
                if outcome.kind is Kind.REFUNDED:
                    refund_txs.add(outcome.detail)
    _account_fills(fills, paid_orders, ledgers, records, report)
    for chain_id, seen in shown.items():
        for payout in sorted(seen.payouts - refund_txs - records.claim_payouts):
            report.unaccounted.append(
                f"payout {chain_id}:{payout} pays no deposit or claim" + records.named_by(payout)
            )


def _account_fills(
    fills: Counter[str],
    paid_orders: Counter[str],
    ledgers: Mapping[int, ChainLedger],
    records: Records,
    report: MoneyReport,
) -> None:
    """Each order filled once, and paid for by one deposit."""
    for order_id, count in fills.items():
        request = records.requests_by_order.get(order_id)
        if request is not None and request.origin_chain_id not in ledgers:
            continue  # paid on a chain this check does not read
        if paid_orders[order_id] != 1 or count != 1:
            report.unaccounted.append(
                f"order {order_id}: filled {count}x, paid by {paid_orders[order_id]} deposits"
            )


def _outcomes(
    deposit: ChainDeposit, parts: list[Deposit], judge: _PartJudge
) -> list[tuple[Outcome, str]]:
    if not parts:
        return [(Outcome(Kind.UNSETTLED, "not recorded yet"), str(deposit))]
    if sum(int(part.amount) for part in parts) != deposit.amount:
        return [(Outcome(Kind.BROKEN, "its recorded parts do not add up"), str(deposit))]
    if any(part.currency.lower() != deposit.currency.lower() for part in parts):
        currencies = sorted({part.currency for part in parts})
        return [(Outcome(Kind.BROKEN, f"recorded in {currencies}"), str(deposit))]
    return [(judge.outcome(deposit, part), f"{deposit} part {part.part}") for part in parts]


def _count(outcome: Outcome, where: str, report: MoneyReport, paid_orders: Counter[str]) -> None:
    if outcome.kind is Kind.UNSETTLED:
        report.unsettled.append(f"{where}: {outcome.detail}")
    elif outcome.kind is Kind.BROKEN:
        report.unaccounted.append(f"{where}: {outcome.detail}")
    elif outcome.kind is Kind.FILLED:
        report.filled += 1
        report.repaid += outcome.repaid
        paid_orders[outcome.order_id] += 1
    elif outcome.kind is Kind.FILLED_PER_RECORDS:
        report.filled += 1
        report.taken_from_records += 1
    elif outcome.kind is Kind.REFUNDED:
        report.refunded += 1
    else:
        report.kept += 1


@dataclass
class _PartJudge:
    ledgers: Mapping[int, ChainLedger]
    records: Records
    fills: Counter[str]

    def outcome(self, deposit: ChainDeposit, part: Deposit) -> Outcome:
        ledger = self.ledgers[deposit.chain_id]
        request = self.records.requests.get(part.request_id) if part.request_id else None
        paying = part.outcome == "ACCEPTED" and part.part == 0 and request is not None
        if paying and request is not None and request.status not in {"failure", "refund"}:
            return self._paying(deposit, part, request)
        if part.refund_status == "skipped":
            if ledger.paid_back_too(deposit, part):
                return Outcome(Kind.BROKEN, "kept, yet paid back")
            if not part.refund_fail_reason:
                return Outcome(Kind.BROKEN, "kept with no reason recorded")
            return Outcome(Kind.KEPT)
        if part.refund_status != "done" or part.refund_tx_hash is None:
            return Outcome(Kind.UNSETTLED, "refund on its way")
        if paying and request is not None and self.fills[request.order_id]:
            return Outcome(Kind.BROKEN, "filled and refunded")
        paid = ledger.refund_paid(deposit, part, self.records)
        if paid is None:
            return Outcome(Kind.BROKEN, f"refund {part.refund_tx_hash} is not a payout of it")
        if paid != int(part.refund_amount or -1) or not 0 < paid <= int(part.amount):
            return Outcome(
                Kind.BROKEN, f"refund paid {paid}, the service says {part.refund_amount}"
            )
        return Outcome(Kind.REFUNDED, part.refund_tx_hash)

    def _paying(self, deposit: ChainDeposit, part: Deposit, request: Request) -> Outcome:
        """The part that pays for its request: filled on its destination, once; paid out of
        the Depository only to the solver, by its recorded repayment, once it was filled."""
        repayment = self.records.repayments.get(part.id)
        repaid = repayment is not None and repayment.state == "repaid"
        if self.ledgers[deposit.chain_id].paid_back_too(deposit, part) != repaid:
            if repayment is not None and repayment.state == "sending":
                return Outcome(Kind.UNSETTLED, "repayment on its way")
            if repaid:
                return Outcome(Kind.BROKEN, "recorded repaid, yet its payout nonce is unused")
            return Outcome(Kind.BROKEN, "it pays for its request and was paid back too")
        if repayment is not None and repaid and not 0 < int(repayment.amount) <= int(part.amount):
            return Outcome(Kind.BROKEN, f"repaid {repayment.amount} of {part.amount}")
        if deposit.order_id and deposit.order_id != request.order_id:
            return Outcome(Kind.BROKEN, f"it pays for order {request.order_id}")
        if request.destination_chain_id not in self.ledgers:
            if request.status == "success":
                return Outcome(Kind.FILLED_PER_RECORDS)
            return Outcome(Kind.UNSETTLED, "fill")
        if self.fills[request.order_id]:
            return Outcome(Kind.FILLED, order_id=request.order_id, repaid=repaid)
        if repaid:
            return Outcome(Kind.BROKEN, "repaid to the solver, never filled")
        return Outcome(Kind.UNSETTLED, "fill on its way")
