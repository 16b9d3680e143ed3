"""Checks of the quote body's fields, each failing with the compat notes' `errorCode`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from crossfill.config.deployment import QuoteSettings
from crossfill.domain.identifiers import (
    UINT256_LIMIT,
    InvalidIdentifier,
    is_decimal,
    parse_address,
    parse_hex_bytes,
    parse_text,
)
from crossfill.errors import BadRequest, Forbidden
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig
from crossfill.kinds.evm.state import ChainState
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.fees import BPS, TradeType
from crossfill.quoting.request import AppFee, ExtraTx, QuoteRequest
from crossfill.quoting.sponsorship import (
    COMPONENTS,
    DEFAULT_COMPONENTS,
    SponsorRequest,
    SponsorWallet,
)

MAX_UINT_DIGITS = 78  # 2**256 has 78 decimal digits
MAX_EXTRA_TXS = 10
MAX_TXS_GAS_LIMIT = 10_000_000
DEFAULT_SLIPPAGE_BPS = 50
MAX_APP_FEE_RECIPIENTS = 10
MAX_APP_FEES_BPS = 5_000
SWAP_SOURCES = ("uniswap-v2",)
# `permitExpiry` (seconds): 10 minutes unless asked; `originGasOverhead` (gas units) at most.
DEFAULT_PERMIT_EXPIRY_SECONDS = 600
PERMIT_EXPIRY_SECONDS = (60, 3600)
MAX_ORIGIN_GAS_OVERHEAD = 1_000_000
# `topupGasAmount` in USD micro-units: $2 unless asked, at most $50 (the solver fronts it).
DEFAULT_TOPUP_USD_MICROS = 2_000_000
MAX_TOPUP_USD_MICROS = 50_000_000


@dataclass(frozen=True)
class ChainView:
    """What the engine may read of a chain: its configuration and its live snapshot."""

    config: ChainConfig
    state: ChainState
    disabled: bool


@dataclass(frozen=True)
class ExtraCall:
    """One of the body's `txs`: run on the destination after the funds arrive."""

    to: str
    value: int
    data: bytes


@dataclass(frozen=True)
class PermitRequest:
    """`usePermit`: the user signs a deposit authorization instead of sending a transaction;
    the solver submits it, paying origin gas (plus `originGasOverhead`) the user is charged."""

    expiry_seconds: int
    origin_gas_overhead: int


@dataclass(frozen=True)
class AppFeeShare:
    recipient: str
    bps: int


def _uint_text(value: str) -> bool:
    return len(value) <= MAX_UINT_DIGITS and is_decimal(value)


def address(value: str | None, error_code: str, field: str) -> str:
    try:
        return parse_address(value, field)
    except InvalidIdentifier as exc:
        raise QuoteError(error_code, str(exc)) from None


def referrer(value: str | None) -> str | None:
    """`referrer`: stored and echoed in records and webhooks, so bounded and printable."""
    if value is None:
        return None
    try:
        return parse_text(value, "referrer")
    except InvalidIdentifier as exc:
        raise BadRequest(str(exc)) from None


def chain(chains: Mapping[int, ChainView], chain_id: int, field: str) -> ChainView:
    view = chains.get(chain_id)
    if view is None:
        raise QuoteError("UNSUPPORTED_CHAIN", f"{field} {chain_id} is not a supported chain")
    if view.disabled:
        raise QuoteError("CHAIN_DISABLED", f"chain {chain_id} is disabled")
    return view


def currency(view: ChainView, value: str, error_code: str, field: str) -> CurrencyConfig:
    address(value, error_code, field)
    found = view.config.currency(value)
    if found is None or not found.supports_bridging:
        raise QuoteError(
            "UNSUPPORTED_CURRENCY", f"{field} {value} is not supported on chain {view.config.id}"
        )
    return found


def trade_type(value: str) -> TradeType:
    try:
        return TradeType(value)
    except ValueError:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "tradeType must be EXACT_INPUT, EXACT_OUTPUT or EXPECTED_OUTPUT",
        ) from None


def amount(value: str) -> int:
    if not _uint_text(value):
        raise QuoteError(
            "AMOUNT_TOO_LOW", "amount must be a positive integer string (smallest unit)"
        )
    parsed = int(value)
    if parsed <= 0 or parsed >= UINT256_LIMIT:
        raise QuoteError("AMOUNT_TOO_LOW", "amount must be a positive integer below 2**256")
    return parsed


def slippage_bps(value: str | None) -> int:
    if value is None:
        return DEFAULT_SLIPPAGE_BPS
    if not _uint_text(value) or int(value) > BPS:
        raise QuoteError(
            "INVALID_SLIPPAGE_TOLERANCE", "slippageTolerance must be basis points from 0 to 10000"
        )
    return int(value)


def ttl(value: int | None, settings: QuoteSettings) -> timedelta:
    if value is None:
        return timedelta(seconds=settings.ttl_seconds)
    if not settings.min_ttl_seconds <= value <= settings.max_ttl_seconds:
        raise BadRequest(
            f"ttl must be {settings.min_ttl_seconds}..{settings.max_ttl_seconds} seconds"
        )
    return timedelta(seconds=value)


def app_fees(fees: tuple[AppFee, ...] | None) -> tuple[AppFeeShare, ...]:
    """`appFees[{recipient, fee}]`: basis points of the input, several recipients."""
    if not fees:
        return ()
    if len(fees) > MAX_APP_FEE_RECIPIENTS:
        raise BadRequest(f"appFees takes at most {MAX_APP_FEE_RECIPIENTS} recipients")
    shares = []
    for index, fee in enumerate(fees):
        recipient = address(fee.recipient, "INVALID_ADDRESS", f"appFees[{index}].recipient")
        if not _uint_text(fee.fee) or int(fee.fee) > BPS:
            raise BadRequest(f"appFees[{index}].fee must be basis points from 0 to 10000")
        shares.append(AppFeeShare(recipient=recipient, bps=int(fee.fee)))
    if sum(share.bps for share in shares) > MAX_APP_FEES_BPS:
        raise BadRequest(f"appFees may add up to at most {MAX_APP_FEES_BPS} bps")
    return tuple(shares)


def swap_sources(body: QuoteRequest, *, origin: bool) -> frozenset[str]:
    """Sources a leg may use: included (per side, then overall) minus excluded."""
    side = body.included_origin_swap_sources if origin else body.included_destination_swap_sources
    wanted = side if side is not None else body.included_swap_sources
    for field, values in (
        ("includedSwapSources", body.included_swap_sources),
        ("excludedSwapSources", body.excluded_swap_sources),
        ("includedOriginSwapSources", body.included_origin_swap_sources),
        ("includedDestinationSwapSources", body.included_destination_swap_sources),
    ):
        unknown = sorted(set(values or ()) - set(SWAP_SOURCES))
        if unknown:
            raise QuoteError(
                "NO_SWAP_ROUTES_FOUND",
                f"{field}: unknown swap source {', '.join(unknown)}; known: "
                + ", ".join(SWAP_SOURCES),
            )
    allowed = set(SWAP_SOURCES if wanted is None else wanted)
    return frozenset(allowed - set(body.excluded_swap_sources or ()))


def extra_calls(txs: tuple[ExtraTx, ...] | None) -> tuple[ExtraCall, ...]:
    """`txs[{to, value, data}]`, checked for shape (simulation comes later)."""
    if not txs:
        return ()
    if len(txs) > MAX_EXTRA_TXS:
        raise QuoteError("INVALID_EXTRA_TXS", f"at most {MAX_EXTRA_TXS} txs")
    calls = []
    for index, tx in enumerate(txs):
        to = address(tx.to, "INVALID_EXTRA_TXS", f"txs[{index}].to")
        value = tx.value if tx.value is not None else "0"
        if not _uint_text(value) or int(value) >= UINT256_LIMIT:
            raise QuoteError("INVALID_EXTRA_TXS", f"txs[{index}].value must be a uint256 string")
        try:
            data = parse_hex_bytes(tx.data or "0x", f"txs[{index}].data")
        except InvalidIdentifier as exc:
            raise QuoteError("INVALID_EXTRA_TXS", str(exc)) from None
        calls.append(ExtraCall(to=to, value=int(value), data=data))
    return tuple(calls)


def txs_gas_limit(value: int | None, default: int) -> int:
    if value is None:
        return default
    if not 0 < value <= MAX_TXS_GAS_LIMIT:
        raise QuoteError("INVALID_EXTRA_TXS", f"txsGasLimit must be 1..{MAX_TXS_GAS_LIMIT} gas")
    return value


def sponsor_request(body: QuoteRequest, wallet: SponsorWallet | None) -> SponsorRequest | None:
    """`subsidizeFees`, `sponsoredFeeComponents`, `maxSubsidizationAmount` (USD micro-units)."""
    if not body.subsidize_fees:
        if body.sponsored_fee_components or body.max_subsidization_amount is not None:
            raise BadRequest(
                "sponsoredFeeComponents and maxSubsidizationAmount need subsidizeFees: true"
            )
        return None
    if wallet is None:
        raise Forbidden(
            "subsidizeFees needs an x-api-key whose key has a sponsor wallet",
            error_code="FORBIDDEN",
        )
    components = tuple(body.sponsored_fee_components or DEFAULT_COMPONENTS)
    unknown = sorted(set(components) - set(COMPONENTS))
    if unknown:
        raise BadRequest(
            f"sponsoredFeeComponents: unknown {', '.join(unknown)}; known: {', '.join(COMPONENTS)}"
        )
    cap = body.max_subsidization_amount
    if cap is not None and not _uint_text(cap):
        raise BadRequest("maxSubsidizationAmount must be a USD amount in micro-units (integer)")
    return SponsorRequest(
        components=components,
        cap_usd_micros=None if cap is None else int(cap),
        wallet=wallet,
    )


def gas_topup_usd(body: QuoteRequest, *, same_chain: bool, native_out: bool) -> int:
    """`topupGas` / `topupGasAmount`: the USD value (micro-units) of destination gas currency
    delivered to the recipient with the fill; 0 when not asked."""
    if not body.topup_gas:
        if body.topup_gas_amount is not None:
            raise BadRequest("topupGasAmount needs topupGas: true")
        return 0
    if same_chain:
        raise QuoteError(
            "UNSUPPORTED_ROUTE", "topupGas applies to cross-chain requests (it rides the fill)"
        )
    if native_out:
        raise QuoteError(
            "UNSUPPORTED_ROUTE",
            "topupGas applies when the destination currency is not the destination's gas "
            "currency (the output already is gas)",
        )
    if body.topup_gas_amount is None:
        return DEFAULT_TOPUP_USD_MICROS
    value = body.topup_gas_amount
    if not _uint_text(value) or not 0 < int(value) <= MAX_TOPUP_USD_MICROS:
        raise BadRequest(
            f"topupGasAmount must be USD micro-units from 1 to {MAX_TOPUP_USD_MICROS} "
            "(1000000 = $1)"
        )
    return int(value)


def fixed_rate_bps(body: QuoteRequest, *, bridge: bool) -> int | None:
    """`fixedRate`: basis points of the input charged as the whole service fee, gas included
    (a fixed spread); offered on bridges of one asset, where nothing else moves the rate."""
    value = body.fixed_rate
    if value is None:
        return None
    if not _uint_text(value) or int(value) >= BPS:
        raise BadRequest("fixedRate must be basis points from 0 to 9999")
    if body.topup_gas:
        raise BadRequest("fixedRate and topupGas cannot be combined: a top-up is bought on top")
    if not bridge:
        raise QuoteError(
            "UNSUPPORTED_ROUTE",
            "fixedRate applies to bridges of one asset; a swap is priced by its pool",
        )
    return int(value)


def refuse_permit_options_alone(body: QuoteRequest) -> None:
    """`permitExpiry` and `originGasOverhead` mean something only with `usePermit`."""
    if body.permit_expiry is not None or body.origin_gas_overhead:
        raise BadRequest(
            "permitExpiry and originGasOverhead apply only with usePermit: true "
            "(the only origin transaction the solver sends)"
        )


def permit_request(
    body: QuoteRequest, *, same_chain: bool, currency_in: CurrencyConfig
) -> PermitRequest | None:
    """`usePermit`, `permitExpiry`, `originGasOverhead`: a gasless ERC-20 deposit."""
    if not body.use_permit:
        refuse_permit_options_alone(body)
        return None
    if same_chain or currency_in.is_native or not currency_in.supports_permit:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            f"usePermit applies to cross-chain deposits of an ERC-20 that supports permits; "
            f"{currency_in.symbol} here does not",
        )
    if not body.explicit_deposit:
        raise BadRequest("usePermit and explicitDeposit: false cannot be combined")
    expiry = body.permit_expiry or DEFAULT_PERMIT_EXPIRY_SECONDS
    low, high = PERMIT_EXPIRY_SECONDS
    if not low <= expiry <= high:
        raise BadRequest(f"permitExpiry must be {low}..{high} seconds")
    overhead = body.origin_gas_overhead or 0
    if not 0 <= overhead <= MAX_ORIGIN_GAS_OVERHEAD:
        raise BadRequest(f"originGasOverhead must be 0..{MAX_ORIGIN_GAS_OVERHEAD} gas")
    return PermitRequest(expiry_seconds=expiry, origin_gas_overhead=overhead)


def paid_to_solver(body: QuoteRequest, *, same_chain: bool, currency_in: CurrencyConfig) -> bool:
    """`protocolVersion: "v1"`: the deposit is paid to the solver through the Receiver, which
    forwards ether only, with the order id as its data; nothing is escrowed. Served for
    cross-chain deposits of the origin's gas currency."""
    if body.protocol_version != "v1":
        return False
    if same_chain:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "protocolVersion v1 applies to cross-chain deposits; a same-chain request runs in "
            "one transaction of its own",
        )
    if not currency_in.is_native:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            f"protocolVersion v1 deposits are the gas currency paid to the solver through the "
            f"Receiver; {currency_in.symbol} needs v2 (the Depository)",
        )
    if body.subsidize_fees:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "protocolVersion v1 and subsidizeFees cannot be combined: a sponsor pays into the "
            "Depository (v2)",
        )
    return True
