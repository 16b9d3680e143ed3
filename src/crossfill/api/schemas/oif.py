"""The Open Intents Framework's quote and order bodies (its OpenAPI, `oif-specs`
`specs/openapi.yaml` and `schemas/typescript/types.ts`), as pydantic models: the requests
parsed and checked here, the answers documented (docs/erc7683.md, "OIF endpoints"). Each is
named `Oif…`: OpenAPI components are named by model, and `Quote` is a wire schema's."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from crossfill.domain.oif import LOCK_KINDS, ORDER_TYPES

# Bounds on what a client may send, well above what any order needs.
MAX_ITEMS = 16
MAX_TEXT = 200
MAX_ADDRESS = 2 + 2 * (6 + 32 + 20)
INTEROP_PATTERN = r"^0x0001[a-fA-F0-9]+$"
AMOUNT_PATTERN = r"^[0-9]{1,78}$"

InteropText = Field(pattern=INTEROP_PATTERN, max_length=MAX_ADDRESS)
SwapType = Literal["exact-input", "exact-output"]
LockKind = Literal["the-compact", "rhinestone"]
OrderType = Literal["oif-escrow-v0", "oif-resource-lock-v0", "oif-3009-v0", "oif-user-open-v0"]
FailureHandling = Literal["refund-automatic", "refund-claim", "needs-new-signature"]
Preference = Literal["price", "speed", "input-priority", "trust-minimization"]
Scheme = Literal["erc-4337", "permit2", "erc20-permit", "eip-3009"]
assert set(LockKind.__args__) == set(LOCK_KINDS)  # type: ignore[attr-defined]
assert set(OrderType.__args__) == set(ORDER_TYPES)  # type: ignore[attr-defined]


class _Body(BaseModel):
    # Fields the OIF adds later (or an aggregator's own, such as `metadata`) are ignored.
    model_config = ConfigDict(extra="ignore")


class OifAssetLockReference(_Body):
    kind: LockKind
    params: dict[str, Any] | None = None


class OifOriginSubmission(_Body):
    mode: Literal["user", "protocol"]
    schemes: list[Scheme] | None = Field(default=None, max_length=MAX_ITEMS)


class OifInput(_Body):
    user: StrictStr = InteropText
    asset: StrictStr = InteropText
    amount: StrictStr | None = Field(default=None, pattern=AMOUNT_PATTERN)
    lock: OifAssetLockReference | None = None


class OifOutput(_Body):
    receiver: StrictStr = InteropText
    asset: StrictStr = InteropText
    amount: StrictStr | None = Field(default=None, pattern=AMOUNT_PATTERN)
    calldata: StrictStr | None = Field(default=None, max_length=MAX_TEXT)


class OifIntent(_Body):
    intentType: Literal["oif-swap"]
    inputs: list[OifInput] = Field(min_length=1, max_length=MAX_ITEMS)
    outputs: list[OifOutput] = Field(min_length=1, max_length=MAX_ITEMS)
    swapType: SwapType = "exact-input"
    minValidUntil: StrictInt | None = Field(default=None, ge=0, le=2**32 - 1)
    preference: Preference | None = None
    originSubmission: OifOriginSubmission | None = None
    failureHandling: list[FailureHandling] | None = Field(default=None, max_length=MAX_ITEMS)
    partialFill: StrictBool | None = None
    metadata: dict[str, Any] | None = None


class OifGetQuoteRequest(_Body):
    user: StrictStr = InteropText
    intent: OifIntent
    supportedTypes: list[StrictStr] = Field(max_length=MAX_ITEMS)


class OifOrderPayload(_Body):
    signatureType: Literal["eip712"]
    domain: dict[str, Any]
    primaryType: StrictStr = Field(max_length=MAX_TEXT)
    message: dict[str, Any]
    types: dict[str, Any] | None = None


class OifOrder(_Body):
    """An order of any OIF type; Crossfill takes `oif-escrow-v0` (its payload required)."""

    type: OrderType
    payload: OifOrderPayload | None = None


class OifPostOrderRequest(_Body):
    order: OifOrder
    # 0x-hex (what OIF's solver and aggregator send), or the bytes as an array of numbers.
    signature: StrictStr | list[StrictInt] = Field(max_length=2 + 2 * 1024)
    quoteId: StrictStr | None = Field(default=None, max_length=MAX_TEXT)
    originSubmission: OifOriginSubmission | None = None


# ---- answers (documentation only) -------------------------------------------------------


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class OifTypedOrder(_Answer):
    type: Literal["oif-escrow-v0"]
    payload: dict[str, Any]


class OifQuotePreview(_Answer):
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]


class OifQuote(_Answer):
    order: OifTypedOrder
    validUntil: int
    eta: int
    quoteId: str
    provider: str
    preview: OifQuotePreview
    failureHandling: FailureHandling
    partialFill: bool
    metadata: dict[str, Any]


class OifGetQuoteResponse(_Answer):
    quotes: list[OifQuote]


class OifPostOrderResponse(_Answer):
    orderId: str | None = None
    status: Literal["received", "rejected", "error"]
    message: str | None = None
    order: dict[str, Any] | None = None


class OifAssetAmount(_Answer):
    asset: str
    amount: str


class OifSettlement(_Answer):
    type: Literal["escrow", "resourceLock"]
    data: dict[str, Any]


class OifGetOrderResponse(_Answer):
    id: str
    status: Literal[
        "created",
        "pending",
        "executed",
        "settled",
        "executing",
        "settling",
        "finalized",
        "failed",
        "refunded",
    ]
    createdAt: int
    updatedAt: int
    quoteId: str | None = None
    inputAmounts: list[OifAssetAmount]
    outputAmounts: list[OifAssetAmount]
    settlement: OifSettlement
    fillTransaction: dict[str, Any] | None = None


class OifErrorResponse(BaseModel):
    """Every error on the OIF paths: a code, a message, and what else the service says."""

    model_config = ConfigDict(extra="allow")
    error: str
    message: str
    details: dict[str, Any] | None = None
    retryAfter: int | None = None
