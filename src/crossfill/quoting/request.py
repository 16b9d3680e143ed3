"""A quote request in the service's own terms: every option a client may state, as plain
typed values. The API builds it from the wire body (`api.schemas.quote.QuoteBody`); planning
reads only this.

Addresses, amounts and slippage stay text here: the quote checks (`quoting.inputs`) parse
them and answer with the spec's `errorCode`, which a schema error could not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class AppFee:
    recipient: str
    fee: str


@dataclass(frozen=True)
class ExtraTx:
    to: str
    value: str | None = None
    data: str | None = None
    original_tx_value: str | None = None


@dataclass(frozen=True)
class QuoteRequest:
    user: str
    origin_chain_id: int
    destination_chain_id: int
    origin_currency: str
    destination_currency: str
    amount: str
    trade_type: str
    recipient: str | None = None
    refund_to: str | None = None
    recovery_address: str | None = None
    referrer: str | None = None
    referrer_address: str | None = None
    txs: tuple[ExtraTx, ...] | None = None
    txs_gas_limit: int | None = None
    authorization_list: tuple[Any, ...] | None = None
    gas_limit_for_deposit_specified_txs: int | None = None
    additional_data: Mapping[str, Any] | None = None
    deposit_fee_payer: str | None = None
    max_route_length: int | None = None
    use_shared_accounts: bool | None = None
    include_compute_unit_limit: bool | None = None
    refund_on_origin: bool | None = None
    topup_gas: bool | None = None
    topup_gas_amount: str | None = None
    enable_true_exact_output: bool | None = None
    explicit_deposit: bool = True
    use_external_liquidity: bool | None = None
    use_fallbacks: bool | None = None
    use_permit: bool | None = None
    permit_expiry: int | None = None
    include_protocol_data: bool | None = None
    use_deposit_address: bool | None = None
    strict: bool | None = None
    force_solver_execution: bool | None = None
    slippage_tolerance: str | None = None
    late_payment_slippage_tolerance: str | None = None
    app_fees: tuple[AppFee, ...] | None = None
    subsidize_fees: bool | None = None
    sponsored_fee_components: tuple[str, ...] | None = None
    max_subsidization_amount: str | None = None
    included_swap_sources: tuple[str, ...] | None = None
    excluded_swap_sources: tuple[str, ...] | None = None
    included_origin_swap_sources: tuple[str, ...] | None = None
    included_destination_swap_sources: tuple[str, ...] | None = None
    override_price_impact: bool | None = None
    disable_swap_provider_preference: bool | None = None
    disable_origin_swaps: bool | None = None
    origin_gas_overhead: int | None = None
    fixed_rate: str | None = None
    ttl: int | None = None
    protocol_version: str | None = None


_FIELDS = frozenset(field.name for field in fields(QuoteRequest))


def quote_request(values: dict[str, Any]) -> QuoteRequest:
    """A QuoteRequest from every one of its fields, by name. The same object as
    `QuoteRequest(**values)`, without the frozen `__init__`'s `object.__setattr__` per field
    (55 of them: about a third of turning each quote's body into a request)."""
    if values.keys() != _FIELDS:
        raise TypeError(f"QuoteRequest fields expected, got {sorted(values.keys() ^ _FIELDS)}")
    built = object.__new__(QuoteRequest)
    built.__dict__.update(values)
    return built
