"""Request records of the v3 listing (`GET /requests/v3`) and its page envelope."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field, JsonValue

from crossfill_client.models._base import WireModel
from crossfill_client.models.common import Amount, Currency
from crossfill_client.models.quote import Route
from crossfill_client.models.status import RequestStatus


class DepositAddressInfo(WireModel):
    address: str
    type: str
    depositor: str | None = None
    deposit_tx_hash: str | None = None
    recovery_address: str | None = None


class RecordTransaction(WireModel):
    """A transaction of the request (`inTxs`, `outTxs`): `fee` in the chain's smallest unit,
    `timestamp` Unix seconds."""

    tx_hash: str
    fee: int
    block: int
    chain_id: int
    timestamp: int
    status: str
    type: str = "onchain"


class RecordRoute(WireModel):
    """The route as quoted, and as it went (`actual`, the quoted one until there are facts)."""

    quoted: Route
    actual: Route | None = None


class AppFeeRecord(WireModel):
    quoted: tuple[dict[str, JsonValue], ...] = ()
    actual: tuple[dict[str, JsonValue], ...] = ()
    currency: Currency | None = None


class RecordData(WireModel):
    slippage_tolerance: str | None = None
    fail_reason: str | None = None
    refund_fail_reason: str | None = None
    failed_tx_hash: str | None = None
    failed_tx_block_number: int | None = None
    failed_call_data: dict[str, JsonValue] | None = None
    uses_external_liquidity: bool | None = None
    time_estimate: float | None = None
    in_txs: tuple[RecordTransaction, ...] = ()
    out_txs: tuple[RecordTransaction, ...] = ()
    app_fees: AppFeeRecord | None = None
    fees: dict[str, JsonValue] | None = None
    fee_sponsorship: dict[str, JsonValue] | None = None
    route: RecordRoute | None = None
    refund_currency_data: Amount | None = None
    external_metadata: dict[str, JsonValue] | None = None


class RequestRecord(WireModel):
    """One request as the v3 listing shows it."""

    id: str
    status: RequestStatus
    user: str
    sender: str | None = None
    recipient: str
    refund_to: str | None = None
    deposit_address: DepositAddressInfo | None = None
    request_type: str | None = None
    superseded_by_request_id: str | None = None
    features: tuple[str, ...] = ()
    data: RecordData
    protocol: dict[str, JsonValue] | None = None
    created_at: datetime
    updated_at: datetime


class RequestPage(WireModel):
    """One page of the listing; `continuation` is the cursor of the next (None on the last)."""

    requests: tuple[RequestRecord, ...]
    continuation: str | None = None
    total: int | None = Field(default=None)
