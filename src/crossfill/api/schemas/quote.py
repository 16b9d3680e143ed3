"""The body of POST /quote/v2 as it travels: every field the compat notes list, by its wire
name. The route turns it into the planning's own `quoting.request.QuoteRequest`.

Types are loose on purpose where the spec has coded errors (addresses, amounts, slippage): the
quote checks answer those with the right `errorCode`, which a schema error can't.
"""

from __future__ import annotations

import re
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ConfigDict, StrictInt

from crossfill.quoting import request


def _snake_case(wire_name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", wire_name).lower()


class AppFee(BaseModel):
    recipient: str
    fee: str

    def to_request(self) -> request.AppFee:
        return request.AppFee(recipient=self.recipient, fee=self.fee)


class ExtraTx(BaseModel):
    to: str
    value: str | None = None
    data: str | None = None
    originalTxValue: str | None = None

    def to_request(self) -> request.ExtraTx:
        return request.ExtraTx(
            to=self.to, value=self.value, data=self.data, original_tx_value=self.originalTxValue
        )


class QuoteBody(BaseModel):
    # Unknown fields are ignored: clients newer than us must keep working.
    model_config = ConfigDict(extra="ignore")

    user: str
    originChainId: StrictInt
    destinationChainId: StrictInt
    originCurrency: str
    destinationCurrency: str
    amount: str
    tradeType: str
    recipient: str | None = None
    refundTo: str | None = None
    recoveryAddress: str | None = None
    referrer: str | None = None
    referrerAddress: str | None = None
    txs: list[ExtraTx] | None = None
    txsGasLimit: int | None = None
    authorizationList: list[Any] | None = None
    gasLimitForDepositSpecifiedTxs: int | None = None
    additionalData: dict[str, Any] | None = None
    depositFeePayer: str | None = None
    maxRouteLength: int | None = None
    useSharedAccounts: bool | None = None
    includeComputeUnitLimit: bool | None = None
    refundOnOrigin: bool | None = None
    topupGas: bool | None = None
    topupGasAmount: str | None = None
    enableTrueExactOutput: bool | None = None
    explicitDeposit: bool = True
    useExternalLiquidity: bool | None = None
    useFallbacks: bool | None = None
    usePermit: bool | None = None
    permitExpiry: int | None = None
    includeProtocolData: bool | None = None
    useDepositAddress: bool | None = None
    strict: bool | None = None
    forceSolverExecution: bool | None = None
    slippageTolerance: str | None = None
    latePaymentSlippageTolerance: str | None = None
    appFees: list[AppFee] | None = None
    subsidizeFees: bool | None = None
    sponsoredFeeComponents: list[str] | None = None
    maxSubsidizationAmount: str | None = None
    includedSwapSources: list[str] | None = None
    excludedSwapSources: list[str] | None = None
    includedOriginSwapSources: list[str] | None = None
    includedDestinationSwapSources: list[str] | None = None
    overridePriceImpact: bool | None = None
    disableSwapProviderPreference: bool | None = None
    disableOriginSwaps: bool | None = None
    originGasOverhead: int | None = None
    fixedRate: str | None = None
    ttl: int | None = None
    protocolVersion: str | None = None

    def to_request(self) -> request.QuoteRequest:
        """The same request in planning's terms (lists become tuples, nested items dataclasses)."""
        values = self.__dict__
        fields = {name: values[wire_name] for wire_name, name in _REQUEST_NAMES.items()}
        for name in _LIST_FIELDS:
            items = fields[name]
            if items is not None:
                fields[name] = tuple(
                    item.to_request() if isinstance(item, (AppFee, ExtraTx)) else item
                    for item in items
                )
        return request.quote_request(fields)


# Wire name -> QuoteRequest field, computed once.
_REQUEST_NAMES = {wire_name: _snake_case(wire_name) for wire_name in QuoteBody.model_fields}
# The QuoteRequest fields whose wire values are lists (tuples in planning's terms).
_LIST_FIELDS = tuple(
    _REQUEST_NAMES[wire_name]
    for wire_name, field in QuoteBody.model_fields.items()
    if list in (get_origin(field.annotation), *map(get_origin, get_args(field.annotation)))
)
