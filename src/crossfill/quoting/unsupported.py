"""Quote body options this service does not serve, each refused with a clear 400 and the
errorCode that names why; never accepted and silently ignored.

- Not served yet: the option asks for something this service could offer but does not.
- Part of a feature not offered: the option only means something with another option or a
  chain kind this service does not run (Solana origins, external liquidity). Deposit
  addresses (`useDepositAddress`, `strict`, `recoveryAddress`) are checked by
  `quoting.deposit_address`.

`protocolVersion` is v2 (the Depository's escrow), preferV2 (the same), or v1: the deposit is
paid to the solver through the Receiver (`quoting.inputs.paid_to_solver` says where v1 applies).

`reject_refused` is what every route refuses (SVM routes too, `kinds.svm.options`);
`reject_unsupported` adds what only an EVM route refuses: `depositFeePayer` is served for
deposits from an SVM chain (`kinds.svm.quote`); here, on an EVM route, it is refused.

`refundOnOrigin` is honoured by design and needs no check: refunds are always paid on the
origin chain, by its Depository, to `refundTo`.
"""

from __future__ import annotations

from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest

NOT_YET = "is not supported yet"
# Request field, its wire name, the errorCode refusing it, and why.
_REFUSED: tuple[tuple[str, str, str, str], ...] = (
    ("authorization_list", "authorizationList", "UNSUPPORTED_EXECUTION_TYPE", NOT_YET),
    (
        "gas_limit_for_deposit_specified_txs",
        "gasLimitForDepositSpecifiedTxs",
        "INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS",
        NOT_YET,
    ),
    (
        "use_external_liquidity",
        "useExternalLiquidity",
        "UNSUPPORTED_ROUTE",
        "asks for external liquidity (canonical bridging); none is configured",
    ),
)
# `protocolVersion` values served: v2 (this service's Depository protocol), preferV2, and v1.
_PROTOCOL_VERSIONS = (None, "v1", "v2", "preferV2")


def is_set(value: object) -> bool:
    """Whether an option was asked for: absent, false, empty and 0 ask for nothing."""
    return value not in (None, False, (), "", 0)


def reject_refused(body: QuoteRequest) -> None:
    """The options no route serves, and `protocolVersion` values none knows."""
    if body.txs_gas_limit is not None and not body.txs:
        raise QuoteError("INVALID_EXTRA_TXS", "txsGasLimit is only meaningful with txs")
    for field, wire_name, error_code, why in _REFUSED:
        if is_set(getattr(body, field)):
            raise QuoteError(error_code, f"{wire_name} {why}")
    if body.protocol_version not in _PROTOCOL_VERSIONS:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            f"protocolVersion {body.protocol_version!r}: v1, v2 or preferV2",
        )


def reject_unsupported(body: QuoteRequest) -> None:
    """What an EVM route refuses."""
    reject_refused(body)
    if body.deposit_fee_payer is not None:  # SVM-origin quotes are planned elsewhere
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            f"depositFeePayer applies to deposits from an SVM chain; chain "
            f"{body.origin_chain_id} is an EVM chain",
        )
