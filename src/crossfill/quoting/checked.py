"""The quote body checked against the deployment: chains, currencies, route kind, amounts,
app fees, destination calls and sponsorship, each failing with its `errorCode`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from crossfill.kinds.evm.config import CurrencyConfig
from crossfill.quoting import inputs
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.fees import TradeType
from crossfill.quoting.inputs import AppFeeShare, ChainView, ExtraCall, PermitRequest
from crossfill.quoting.legs import RouteKind, route_kind
from crossfill.quoting.request import QuoteRequest
from crossfill.quoting.sponsorship import SponsorRequest, SponsorWallet
from crossfill.quoting.unsupported import reject_unsupported


@dataclass(frozen=True)
class CheckedRequest:
    """The body's checked fields."""

    kind: RouteKind
    origin: ChainView
    destination: ChainView
    currency_in: CurrencyConfig
    currency_out: CurrencyConfig
    trade_type: TradeType
    amount: int
    slippage_bps: int
    app_fees: tuple[AppFeeShare, ...]
    calls: tuple[ExtraCall, ...]
    calls_gas: int
    sponsoring: SponsorRequest | None
    referrer: str | None
    # USD micro-units of destination gas currency delivered with the fill (`topupGas`).
    topup_usd_micros: int
    # `fixedRate`: the spread, in bps of the input, that replaces the service's fees.
    fixed_rate_bps: int | None
    # `usePermit`: a signed deposit authorization the solver submits on the origin.
    permit: PermitRequest | None
    # `enableTrueExactOutput` on an exact-output destination swap: the surplus to the solver.
    true_exact_output: bool
    # `protocolVersion: "v1"`: the deposit goes to the solver through the Receiver.
    paid_to_solver: bool = False


def _checked_calls(
    body: QuoteRequest, kind: RouteKind, destination: ChainView, currency_out: CurrencyConfig
) -> tuple[tuple[ExtraCall, ...], int]:
    calls = inputs.extra_calls(body.txs)
    if not calls:
        return (), 0
    if kind is not RouteKind.BRIDGE:
        raise QuoteError(
            "EXTRA_TXS_NOT_SUPPORTED",
            "txs run on the destination after a bridge of the same asset; "
            "not after a swap, nor on one chain",
        )
    if not currency_out.is_native and any(call.value for call in calls):
        raise QuoteError(
            "INVALID_EXTRA_TXS", "txs may carry value only when the destination currency is native"
        )
    default_gas = destination.config.fees.call_gas_default
    return calls, inputs.txs_gas_limit(body.txs_gas_limit, default_gas)


def _true_exact_output(
    body: QuoteRequest, kind: RouteKind, trade: TradeType, currency_out: CurrencyConfig
) -> bool:
    """`enableTrueExactOutput`: an exact-output swap pays the recipient exactly the amount
    and its surplus to the solver. Without an output-side swap there is no surplus."""
    swaps = kind in (RouteKind.CROSSCHAIN_SWAP, RouteKind.SAME_CHAIN_SWAP)
    if not body.enable_true_exact_output or not swaps or trade is TradeType.EXACT_INPUT:
        return False
    if kind is not RouteKind.CROSSCHAIN_SWAP or trade is not TradeType.EXACT_OUTPUT:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "enableTrueExactOutput is served for EXACT_OUTPUT cross-chain swaps; "
            "on one chain, or for an expected output, the surplus goes to the recipient",
        )
    if currency_out.is_native:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "enableTrueExactOutput is served for swaps to an ERC-20; "
            "a swap to the gas currency pays its surplus to the recipient",
        )
    return True


def check_request(
    body: QuoteRequest, chains: Mapping[int, ChainView], sponsor_wallet: SponsorWallet | None
) -> CheckedRequest:
    reject_unsupported(body)
    origin = inputs.chain(chains, body.origin_chain_id, "originChainId")
    destination = inputs.chain(chains, body.destination_chain_id, "destinationChainId")
    currency_in = inputs.currency(
        origin, body.origin_currency, "INVALID_INPUT_CURRENCY", "originCurrency"
    )
    currency_out = inputs.currency(
        destination, body.destination_currency, "INVALID_OUTPUT_CURRENCY", "destinationCurrency"
    )
    kind = route_kind(origin.config, destination.config, currency_in, currency_out)
    calls, calls_gas = _checked_calls(body, kind, destination, currency_out)
    trade = inputs.trade_type(body.trade_type)
    return CheckedRequest(
        kind=kind,
        origin=origin,
        destination=destination,
        currency_in=currency_in,
        currency_out=currency_out,
        trade_type=trade,
        amount=inputs.amount(body.amount),
        slippage_bps=inputs.slippage_bps(body.slippage_tolerance),
        app_fees=inputs.app_fees(body.app_fees),
        calls=calls,
        calls_gas=calls_gas,
        sponsoring=inputs.sponsor_request(body, sponsor_wallet),
        referrer=inputs.referrer(body.referrer),
        topup_usd_micros=inputs.gas_topup_usd(
            body, same_chain=kind.same_chain, native_out=currency_out.is_native
        ),
        fixed_rate_bps=inputs.fixed_rate_bps(body, bridge=kind is RouteKind.BRIDGE),
        true_exact_output=_true_exact_output(body, kind, trade, currency_out),
        permit=inputs.permit_request(body, same_chain=kind.same_chain, currency_in=currency_in),
        paid_to_solver=inputs.paid_to_solver(
            body, same_chain=kind.same_chain, currency_in=currency_in
        ),
    )
