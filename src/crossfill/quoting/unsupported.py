"""Quote body fields accepted by the wire format but not served yet: a clear 400, never silence."""

from __future__ import annotations

from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteBody

_NOT_YET: dict[str, str] = {
    "authorizationList": "UNSUPPORTED_EXECUTION_TYPE",
    "gasLimitForDepositSpecifiedTxs": "INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS",
    "topupGas": "UNSUPPORTED_ROUTE",
    "topupGasAmount": "UNSUPPORTED_ROUTE",
    "usePermit": "UNSUPPORTED_EXECUTION_TYPE",
    "useDepositAddress": "UNSUPPORTED_EXECUTION_TYPE",
    "fixedRate": "UNSUPPORTED_EXECUTION_TYPE",
    "depositFeePayer": "UNSUPPORTED_EXECUTION_TYPE",
    "useExternalLiquidity": "UNSUPPORTED_ROUTE",
    "originGasOverhead": "UNSUPPORTED_EXECUTION_TYPE",
}


def _is_set(value: object) -> bool:
    return value not in (None, False, [], "", 0)


def reject_unsupported(body: QuoteBody) -> None:
    if body.txsGasLimit is not None and not body.txs:
        raise QuoteError("INVALID_EXTRA_TXS", "txsGasLimit is only meaningful with txs")
    for field, error_code in _NOT_YET.items():
        if _is_set(getattr(body, field)):
            raise QuoteError(error_code, f"{field} is not supported yet")
    if body.protocolVersion not in (None, "v2", "preferV2"):
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE", f"protocolVersion {body.protocolVersion!r}: only v2"
        )
