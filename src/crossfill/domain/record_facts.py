"""What a request record is built from: the request, its stored quote, and its transactions
with what each of them moved on chain."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# A currency's wire object (spec "Currency object"), keyed by (chain id, lowercase address).
CurrencyObjects = Mapping[tuple[int, str], Mapping[str, Any]]


@dataclass(frozen=True)
class Moved:
    """What one transaction moved, read from its logs: the deposit paid in, what the fill's
    recipient received, what the refund paid back. `usd_micros` is its value when it
    happened; None when there was no price then."""

    currency: str
    amount: int
    usd_micros: int | None = None


@dataclass(frozen=True)
class TxFacts:
    kind: str  # deposit, fill, refund
    chain_id: int
    tx_hash: str
    block_number: int | None
    fee: str | None
    timestamp: int | None
    status: str  # pending, success, failure
    moved: Moved | None = None
    # The fee's value when it was paid (None: unknown), and who sent a deposit's funds in.
    fee_usd_micros: int | None = None
    sender: str | None = None
    # When the service first recorded it: a deposit seen, a fill or refund sent.
    recorded_at: datetime | None = None


@dataclass(frozen=True)
class AppFeeFacts:
    """One app-fee recipient's share, in the input currency; `actual` once settled."""

    recipient: str
    bps: int
    quoted_amount: int
    actual_amount: int | None
    amount_usd_micros: int


@dataclass(frozen=True)
class GasSponsorFacts:
    """A gasless execution's sponsor (POST /execute): who sent the deposit and paid its gas,
    on which chain, what it cost once mined (wei), and whether the client asked that the
    cost be recorded as sponsorship (`subsidizeFees`)."""

    sponsor: str
    chain_id: int
    spent_wei: int | None
    subsidized: bool
    # The call it sent, and whether its transaction reverted (then the record's
    # `failedCallData`).
    to: str = ""
    data: str = "0x"
    value: str = "0"
    reverted: bool = False

    def failed_call(self) -> dict[str, str] | None:
        """The reverted call as the wire's `failedCallData`; None unless it reverted."""
        if not self.reverted:
            return None
        return {"from": self.sponsor, "to": self.to, "data": self.data, "value": self.value}

    def payment(self) -> dict[str, Any] | None:
        """What the sponsor paid, as the wire's sponsor payments read (native wei)."""
        if self.spent_wei is None:
            return None
        return {
            "amount": str(self.spent_wei),
            "address": self.sponsor,
            "chainId": self.chain_id,
            "currency": NATIVE_CURRENCY,
        }


NATIVE_CURRENCY = "0x0000000000000000000000000000000000000000"


@dataclass(frozen=True)
class DepositAddressFacts:
    """A deposit-address request's address, its type (strict | open), who paid it and with
    which origin transaction (None until a transfer is seen), and its recovery address."""

    address: str
    type: str
    depositor: str | None
    deposit_tx_hash: str | None
    recovery_address: str | None

    def v3(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "type": self.type,
            "depositor": self.depositor,
            "depositTxHash": self.deposit_tx_hash,
            "recoveryAddress": self.recovery_address,
        }

    def v2(self) -> dict[str, Any]:
        """As GET /requests/v2 and webhooks show it."""
        return {
            "address": self.address,
            "depositAddressType": self.type,
            "depositor": self.depositor,
            "depositTxHash": self.deposit_tx_hash,
        }


def deposit_address_wire(facts: DepositAddressFacts | None, version: str) -> Any:
    if facts is None:
        return None
    return facts.v3() if version == "v3" else facts.v2()


@dataclass(frozen=True)
class SolverFacts:
    address: str
    protocol_chain_id: str
    chain_id: int


@dataclass(frozen=True)
class RecordFacts:
    request_id: str
    status: str
    user: str
    recipient: str
    refund_to: str
    request_type: str
    features: Sequence[str]
    fail_reason: str | None
    refund_fail_reason: str | None
    amount_out: int
    minimum_amount_out: int
    deposit_address: DepositAddressFacts | None
    referrer: str | None  # only when the caller may see it
    quote: dict[str, Any]
    solver: SolverFacts
    transactions: Sequence[TxFacts]
    created_at: str  # ISO 8601
    updated_at: str
    app_fees: Sequence[AppFeeFacts] = ()
    # The request's stored execution plan (its `sponsorPayment`, among others).
    plan: dict[str, Any] | None = None
    # The configured currencies, for amounts moved in one the quote does not name (a deposit
    # in the wrong currency is refunded in that currency).
    currencies: CurrencyObjects = field(default_factory=dict)
    # Set for a gasless execution (POST /execute).
    gas_sponsor: GasSponsorFacts | None = None
    # What its failure was, beyond the reason (`domain.gasless.FailureDetails` as JSON).
    fail_details: Mapping[str, Any] | None = None
