"""What happened to a request, as its transactions' facts tell: the amount deposited, the amount
received, the refund, each shaped as the spec's Amount object.

The fees actually paid (`actual_fees`) come from the same facts: the gas the service's receipts
paid, the app fees paid out, and what the deposit lost beyond them (on a request that was not
filled, all it lost went to gas).

The quote's figures stay where the spec puts expected ones (`route.quoted`, the destination's
`inputCurrency`); `route.actual` shows a fact once there is one and falls back to `quoted`
where there is none yet (nothing deposited, nothing filled, or a same-chain request whose
user's own transaction moved the funds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from crossfill.domain.money import format_rate, format_units, format_usd
from crossfill.domain.record_facts import Moved, RecordFacts, TxFacts

SETTLED = ("success", "failure")
ENDED_WITHOUT_FILL = ("failure", "refund")


def settled(facts: RecordFacts, kinds: Sequence[str]) -> list[TxFacts]:
    """The request's transactions of these kinds that are mined (success or failure)."""
    return [
        tx
        for tx in facts.transactions
        if tx.kind in kinds and tx.status in SETTLED and tx.block_number is not None
    ]


def _with_moved(facts: RecordFacts, kind: str) -> TxFacts | None:
    return next(
        (tx for tx in settled(facts, (kind,)) if tx.status == "success" and tx.moved is not None),
        None,
    )


def deposit_tx(facts: RecordFacts) -> TxFacts | None:
    """The deposit the request's funds came from, with what it paid in."""
    return _with_moved(facts, "deposit")


def fill_tx(facts: RecordFacts) -> TxFacts | None:
    """The successful fill, with what its recipient received."""
    return _with_moved(facts, "fill")


def refund_tx(facts: RecordFacts) -> TxFacts | None:
    """The successful refund, with what it paid back."""
    return _with_moved(facts, "refund")


def _same_currency(currency: Mapping[str, Any], chain_id: int, address: str) -> bool:
    return int(currency["chainId"]) == chain_id and str(currency["address"]).lower() == address


def currency_object(
    facts: RecordFacts, chain_id: int, address: str, expected: Mapping[str, Any]
) -> Mapping[str, Any]:
    """The wire currency of a moved amount: the quote's own when it is that one, else the
    configured one; a token nobody configured is shown by its address alone."""
    if _same_currency(expected, chain_id, address):
        return expected
    known = facts.currencies.get((chain_id, address))
    if known is not None:
        return known
    return {
        "chainId": chain_id,
        "address": address,
        "symbol": "",
        "name": "",
        "decimals": 0,
        "metadata": {"logoURI": "", "verified": False, "isNative": False},
    }


def amount_object(
    facts: RecordFacts, chain_id: int, moved: Moved, expected: Mapping[str, Any]
) -> dict[str, Any]:
    """An Amount object of what was moved; `expected` is the quote's Amount for that place."""
    currency = currency_object(facts, chain_id, moved.currency, expected["currency"])
    return {
        "currency": currency,
        "amount": str(moved.amount),
        "amountFormatted": format_units(moved.amount, int(currency["decimals"])),
        "amountUsd": format_usd(moved.usd_micros or 0),
        "minimumAmount": str(moved.amount),
    }


def _received(facts: RecordFacts, quoted_out: Mapping[str, Any]) -> tuple[int, Moved] | None:
    """(chain, what the recipient got): the fill's output; nothing at all for a request that
    took a deposit and ended without a fill; None while there is no such fact."""
    fill = fill_tx(facts)
    if fill is not None and fill.moved is not None:
        return fill.chain_id, fill.moved
    if facts.status in ENDED_WITHOUT_FILL and deposit_tx(facts) is not None:
        currency = quoted_out["currency"]
        return int(currency["chainId"]), Moved(str(currency["address"]).lower(), 0, 0)
    return None


def _rate(deposited: dict[str, Any], received: dict[str, Any], quoted_rate: str) -> str:
    amount_in, amount_out = int(deposited["amount"]), int(received["amount"])
    if amount_in == 0 or amount_out == 0:
        return quoted_rate
    return format_rate(
        amount_in,
        int(deposited["currency"]["decimals"]),
        amount_out,
        int(received["currency"]["decimals"]),
    )


def actual_route(
    facts: RecordFacts, quoted: Mapping[str, Mapping[str, Any]], quoted_rate: str
) -> dict[str, Any]:
    """`route.actual`: the quoted legs with what was deposited and received put in."""
    origin, destination = dict(quoted["origin"]), dict(quoted["destination"])
    deposit = deposit_tx(facts)
    if deposit is not None and deposit.moved is not None:
        paid = amount_object(facts, deposit.chain_id, deposit.moved, origin["inputCurrency"])
        # A cross-chain origin leg passes the deposit through as it is.
        passes_through = origin["outputCurrency"]["currency"] == origin["inputCurrency"]["currency"]
        origin["inputCurrency"] = paid
        if passes_through:
            origin["outputCurrency"] = paid
    received = _received(facts, destination["outputCurrency"])
    if received is not None:
        chain_id, moved = received
        destination["outputCurrency"] = amount_object(
            facts, chain_id, moved, destination["outputCurrency"]
        )
    rate = quoted_rate
    if deposit is not None and fill_tx(facts) is not None:
        rate = _rate(origin["inputCurrency"], destination["outputCurrency"], quoted_rate)
    return {"rate": rate, "origin": origin, "destination": destination}


def refund_currency_data(facts: RecordFacts) -> dict[str, Any] | None:
    """`refundCurrencyData`: what the refund paid back; null without a successful refund."""
    refund = refund_tx(facts)
    if refund is None or refund.moved is None:
        return None
    expected = facts.quote["details"]["refundCurrency"]
    return amount_object(facts, refund.chain_id, refund.moved, expected)


ENDED_WITH_FEES = ("success", "refund")


def _usd_micros(text: str) -> int:
    """A wire USD string ("1.5") in micro-USD."""
    return int(Decimal(text) * 10**6)


def _gas_spent_usd(facts: RecordFacts) -> int | None:
    """What the service's own transactions for the request (fills, refunds; reverted ones
    too) cost in gas, valued when each was paid; None when one has no value."""
    spent = [tx.fee_usd_micros for tx in settled(facts, ("fill", "refund"))]
    return None if any(usd is None for usd in spent) else sum(usd or 0 for usd in spent)


def _moved_usd(tx: TxFacts | None) -> int | None:
    """The USD value of what `tx` moved; 0 without such a transaction, None without a price."""
    if tx is None or tx.moved is None:
        return 0
    return tx.moved.usd_micros


def actual_fees(
    facts: RecordFacts, quoted: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, str]] | None:
    """`fees.actual`, from what happened once the request has ended (filled, refunded, or
    failed with no refund to come): `app` the app fees paid out; `sponsored` what a sponsor
    paid (a fill only); `swap` has no charge of its own (the swap's real output is in
    `route.actual`). Filled: `execution` is the gas the fill and refund receipts paid and
    `platform` the rest of the value the deposit lost: deposited - received - refunded -
    execution - app + sponsored (negative when the service paid more than it kept). Not
    filled: the service charges nothing (`platform` 0) and all the deposit lost, deposited -
    refunded - app, is `execution`: what the refund kept back for its own gas and any
    reverted fill's. All valued when each happened; a value without a price falls back to the
    receipts' gas, else the quoted one."""
    ended = facts.status in ENDED_WITH_FEES or (
        facts.status == "failure" and facts.refund_fail_reason is not None
    )
    deposit = deposit_tx(facts)
    if not ended or deposit is None:
        return None
    filled = facts.status == "success"
    gas = _gas_spent_usd(facts)
    app = sum(fee.amount_usd_micros for fee in facts.app_fees if fee.actual_amount)
    sponsored = _usd_micros(quoted["sponsored"]["usd"]) if filled else 0
    values = (_moved_usd(deposit), _moved_usd(fill_tx(facts)), _moved_usd(refund_tx(facts)))
    lost: int | None = None
    if all(value is not None for value in values):
        paid_in, received, refunded = (value or 0 for value in values)
        lost = paid_in - received - refunded - app + sponsored
    if filled:
        execution = gas
        platform = None if lost is None or gas is None else lost - gas
        quoted_platform = quoted["platform"]["usd"]
    else:
        execution = lost if lost is not None else gas
        platform, quoted_platform = 0, "0"
    return {
        "swap": {"usd": "0"},
        "execution": {
            "usd": quoted["execution"]["usd"] if execution is None else format_usd(execution)
        },
        "platform": {"usd": quoted_platform if platform is None else format_usd(platform)},
        "app": {"usd": format_usd(app)},
        "sponsored": {"usd": format_usd(sponsored)},
    }
