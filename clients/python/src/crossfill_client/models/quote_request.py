"""The quote body (`POST /quote/v2`): the seven fields every quote needs, the options this
client names, and any other field of the interface passed as it is (`extra` allowed)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, field_serializer

from crossfill_client.models._base import WireRequest

TradeType = Literal["EXACT_INPUT", "EXACT_OUTPUT", "EXPECTED_OUTPUT"]


class AppFee(WireRequest):
    recipient: str
    fee: int  # basis points

    @field_serializer("fee")
    def _fee_text(self, fee: int) -> str:
        return str(fee)


class ExtraTransaction(WireRequest):
    """A call the destination runs after the fill (`txs`)."""

    to: str
    value: int = 0
    data: str = "0x"
    original_tx_value: int | None = None

    @field_serializer("value", "original_tx_value")
    def _wei_text(self, wei: int | None) -> str | None:
        return None if wei is None else str(wei)


class QuoteRequest(WireRequest):
    """What to quote. `amount` is an integer in the smallest unit of the input currency (of the
    output for EXACT_OUTPUT). Other fields of the interface may be given by their wire name
    (e.g. `QuoteRequest(..., topupGas=True)`)."""

    model_config = ConfigDict(extra="allow")

    user: str
    origin_chain_id: int
    destination_chain_id: int
    origin_currency: str
    destination_currency: str
    amount: int = Field(ge=0)
    trade_type: TradeType = "EXACT_INPUT"
    recipient: str | None = None
    refund_to: str | None = None
    recovery_address: str | None = None
    referrer: str | None = None
    slippage_tolerance: int | None = Field(default=None, ge=0, le=10_000)
    app_fees: list[AppFee] | None = None
    txs: list[ExtraTransaction] | None = None
    use_deposit_address: bool | None = None
    strict: bool | None = None
    use_permit: bool | None = None
    subsidize_fees: bool | None = None
    protocol_version: Literal["v1", "v2", "preferV2"] | None = None
    max_route_length: int | None = None
    deposit_fee_payer: str | None = None
    included_origin_swap_sources: list[str] | None = None
    ttl: int | None = None

    @field_serializer("amount")
    def _amount_text(self, amount: int) -> str:
        return str(amount)

    @field_serializer("slippage_tolerance")
    def _bps_text(self, bps: int | None) -> str | None:
        return None if bps is None else str(bps)
