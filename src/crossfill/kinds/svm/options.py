"""Quote body options on routes to or from the SVM chain: each one served, or refused with a
400 whose errorCode says why; none is accepted and silently ignored (docs/svm.md lists them).

What no route serves is refused as on EVM routes (`quoting.unsupported.reject_refused`); on
top of that, what SVM routes do not serve. Options that only tune a swap (swap sources,
`maxRouteLength`, `overridePriceImpact`, `disableSwapProviderPreference`, `disableOriginSwaps`,
`useSharedAccounts`, `enableTrueExactOutput`) restrict nothing on these direct transfers;
`slippageTolerance` is checked and has nothing to slip. `fixedRate` is served
(`kinds.svm.quote`), `includeProtocolData` too (`kinds.svm.quotes`).
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.quoting import inputs
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from crossfill.quoting.unsupported import is_set, reject_refused

NOT_YET = "is not served on SVM routes yet"
# Request field, its wire name, the errorCode refusing it, and why.
REFUSED_ON_SVM: tuple[tuple[str, str, str, str], ...] = (
    ("txs", "txs", "EXTRA_TXS_NOT_SUPPORTED", f"(destination calls) {NOT_YET}"),
    (
        "topup_gas",
        "topupGas",
        "UNSUPPORTED_ROUTE",
        "is not served on SVM routes: the fill pays the destination currency only",
    ),
    (
        "use_permit",
        "usePermit",
        "UNSUPPORTED_EXECUTION_TYPE",
        "is not served on SVM routes: the deposit is a transaction the user sends",
    ),
    ("app_fees", "appFees", "UNSUPPORTED_EXECUTION_TYPE", NOT_YET),
    ("subsidize_fees", "subsidizeFees", "UNSUPPORTED_EXECUTION_TYPE", NOT_YET),
    (
        "include_compute_unit_limit",
        "includeComputeUnitLimit",
        "UNSUPPORTED_EXECUTION_TYPE",
        f"{NOT_YET}: the deposit transaction carries no compute budget instruction",
    ),
    (
        "referrer_address",
        "referrerAddress",
        "UNSUPPORTED_EXECUTION_TYPE",
        f"{NOT_YET}: nothing is paid to a referrer (referrer is served)",
    ),
    (
        "additional_data",
        "additionalData",
        "UNSUPPORTED_EXECUTION_TYPE",
        "applies to origins whose deposit needs the user's public key; SVM routes need none",
    ),
    (
        "use_deposit_address",
        "useDepositAddress",
        "UNSUPPORTED_EXECUTION_TYPE",
        "is not served on SVM routes: deposit addresses are offered on EVM origins only",
    ),
    (
        "recovery_address",
        "recoveryAddress",
        "UNSUPPORTED_EXECUTION_TYPE",
        "applies to deposit addresses, offered on EVM origins only",
    ),
    (
        "late_payment_slippage_tolerance",
        "latePaymentSlippageTolerance",
        "UNSUPPORTED_EXECUTION_TYPE",
        "is not served on SVM routes: a late deposit is refunded, never filled at a new price",
    ),
)


@dataclass(frozen=True)
class SvmOptions:
    """The options an SVM quote serves that change it."""

    # `fixedRate`: the bps charged as the whole service fee; None when floating.
    fixed_rate_bps: int | None


def check_svm_options(body: QuoteRequest) -> SvmOptions:
    reject_refused(body)
    for field, wire_name, error_code, why in REFUSED_ON_SVM:
        if is_set(getattr(body, field)):
            raise QuoteError(error_code, f"{wire_name} {why}")
    if body.strict is not None:  # `strict: false` asks for an open deposit address too
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "strict applies to deposit addresses, offered on EVM origins only",
        )
    if not body.explicit_deposit:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "explicitDeposit: false is not served on SVM routes: the deposit is the quoted "
            "transaction, which names its order",
        )
    # Options that mean something only with one refused above: refused alone, as on EVM.
    inputs.gas_topup_usd(body, same_chain=False, native_out=False)
    inputs.refuse_permit_options_alone(body)
    inputs.sponsor_request(body, None)
    inputs.slippage_bps(body.slippage_tolerance)
    return SvmOptions(fixed_rate_bps=inputs.fixed_rate_bps(body, bridge=True))
