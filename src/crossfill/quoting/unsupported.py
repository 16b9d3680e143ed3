"""Quote body fields accepted by the wire format but not served yet: a clear 400, never silence."""

from __future__ import annotations

from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest

# Request field, its wire name, and the errorCode refusing it.
_NOT_YET: tuple[tuple[str, str, str], ...] = (
    ("authorization_list", "authorizationList", "UNSUPPORTED_EXECUTION_TYPE"),
    (
        "gas_limit_for_deposit_specified_txs",
        "gasLimitForDepositSpecifiedTxs",
        "INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS",
    ),
    ("use_permit", "usePermit", "UNSUPPORTED_EXECUTION_TYPE"),
    ("use_deposit_address", "useDepositAddress", "UNSUPPORTED_EXECUTION_TYPE"),
    ("fixed_rate", "fixedRate", "UNSUPPORTED_EXECUTION_TYPE"),
    ("deposit_fee_payer", "depositFeePayer", "UNSUPPORTED_EXECUTION_TYPE"),
    ("use_external_liquidity", "useExternalLiquidity", "UNSUPPORTED_ROUTE"),
    ("origin_gas_overhead", "originGasOverhead", "UNSUPPORTED_EXECUTION_TYPE"),
)


def _is_set(value: object) -> bool:
    return value not in (None, False, (), "", 0)


def reject_unsupported(body: QuoteRequest) -> None:
    if body.txs_gas_limit is not None and not body.txs:
        raise QuoteError("INVALID_EXTRA_TXS", "txsGasLimit is only meaningful with txs")
    for field, wire_name, error_code in _NOT_YET:
        if _is_set(getattr(body, field)):
            raise QuoteError(error_code, f"{wire_name} is not supported yet")
    if body.protocol_version not in (None, "v2", "preferV2"):
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE", f"protocolVersion {body.protocol_version!r}: only v2"
        )
