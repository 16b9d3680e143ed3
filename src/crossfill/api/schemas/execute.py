"""POST /execute: the body (what the SDK's executeGaslessBatch sends), parsed into the order."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from crossfill.api.params import ChainIdField
from crossfill.domain.gasless import ExecuteOrder
from crossfill.domain.identifiers import (
    UINT256_LIMIT,
    InvalidIdentifier,
    parse_address,
    parse_hex_bytes,
    parse_text,
    parse_tx_hash,
    parse_uint,
)
from crossfill.domain.set_code import NONCE_LIMIT, Authorization
from crossfill.errors import BadRequest
from crossfill.types import ChainId

MAX_AUTHORIZATIONS = 16
# Checked when parsed, not declared in the schema: the request size limit (256 KiB, a 413)
# bounds the body first, and a schema length near it would have over-long strings answered 413.
MAX_CALLDATA_BYTES = 100 * 1024


class AuthorizationBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chainId: StrictInt
    address: StrictStr = Field(max_length=100)
    nonce: StrictInt
    yParity: StrictInt
    r: StrictStr = Field(max_length=100)
    s: StrictStr = Field(max_length=100)

    def parsed(self, field: str) -> Authorization:
        if not 0 <= self.chainId < UINT256_LIMIT:
            raise InvalidIdentifier(f"{field}.chainId must be a non-negative integer")
        return Authorization(
            chain_id=self.chainId,
            address=parse_address(self.address, f"{field}.address"),
            nonce=parse_uint(self.nonce, f"{field}.nonce", maximum=NONCE_LIMIT - 1),
            y_parity=_y_parity(self.yParity, f"{field}.yParity"),
            r=_word(self.r, f"{field}.r"),
            s=_word(self.s, f"{field}.s"),
        )


def _y_parity(value: int, field: str) -> int:
    if value not in (0, 1):
        raise InvalidIdentifier(f"{field} must be 0 or 1")
    return value


def _word(value: str, field: str) -> int:
    """A 0x-hex quantity of at most 32 bytes."""
    raw = parse_hex_bytes(value if len(value) % 2 == 0 else "0x0" + value[2:], field)
    if not raw or len(raw) > 32:
        raise InvalidIdentifier(f"{field} must be 0x-prefixed hex of at most 32 bytes")
    return int.from_bytes(raw, "big")


def _calldata(value: str) -> bytes:
    if len(value) > 2 + 2 * MAX_CALLDATA_BYTES:
        raise InvalidIdentifier(f"data.data must be at most {MAX_CALLDATA_BYTES} bytes")
    return parse_hex_bytes(value, "data.data")


class CallBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chainId: ChainIdField
    to: StrictStr = Field(max_length=100)
    data: StrictStr
    value: StrictStr = Field(default="0", max_length=100)
    authorizationList: list[AuthorizationBody] = Field(
        default_factory=list, max_length=MAX_AUTHORIZATIONS
    )


class ExecutionOptionsBody(BaseModel):
    # Options this service does not act on (destinationChainExecutionData) are ignored.
    model_config = ConfigDict(extra="ignore")

    referrer: StrictStr | None = Field(default=None, max_length=200)
    subsidizeFees: StrictBool = False


class ExecuteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executionKind: StrictStr = Field(max_length=50)
    data: CallBody
    executionOptions: ExecutionOptionsBody = Field(default_factory=ExecutionOptionsBody)
    requestId: StrictStr | None = Field(default=None, max_length=100)
    # Sent by the SDK (its executor's gas overhead); the service estimates gas itself.
    originGasOverhead: StrictInt | StrictStr | None = None

    def to_order(self) -> ExecuteOrder:
        if self.executionKind != "rawCalls":
            raise BadRequest(f"executionKind must be rawCalls, not {self.executionKind!r}")
        try:
            return self._order()
        except InvalidIdentifier as exc:
            raise BadRequest(str(exc)) from None

    def _order(self) -> ExecuteOrder:
        call, options = self.data, self.executionOptions
        return ExecuteOrder(
            chain_id=ChainId(call.chainId),
            to=parse_address(call.to, "data.to"),
            data=_calldata(call.data),
            value=parse_uint(call.value, "data.value", maximum=UINT256_LIMIT - 1),
            authorizations=tuple(
                entry.parsed(f"data.authorizationList[{index}]")
                for index, entry in enumerate(call.authorizationList)
            ),
            referrer=None
            if options.referrer is None
            else parse_text(options.referrer, "executionOptions.referrer"),
            subsidize_fees=options.subsidizeFees,
            request_id=None
            if self.requestId is None
            else parse_tx_hash(self.requestId, "requestId"),
        )
