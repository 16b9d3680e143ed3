"""Gasless execution (`POST /execute`): a raw call the service's gas sponsor sends as an
EIP-7702 transaction."""

from __future__ import annotations

from typing import Literal

from pydantic import field_serializer

from crossfill_client.models._base import WireModel, WireRequest


class Authorization(WireRequest):
    """A signed EIP-7702 authorization: the account (its signer) delegates its code to
    `address` from `nonce` on."""

    chain_id: int
    address: str
    nonce: int
    y_parity: int
    r: str
    s: str


class RawCall(WireRequest):
    """The call the sponsor sends: to `to` (the user's delegated account), with `data`."""

    chain_id: int
    to: str
    data: str
    value: int = 0
    authorization_list: list[Authorization] | None = None

    @field_serializer("value")
    def _wei_text(self, wei: int) -> str:
        return str(wei)


class ExecutionOptions(WireRequest):
    referrer: str | None = None
    subsidize_fees: bool | None = None


class GaslessExecution(WireRequest):
    """The body of `POST /execute`; `request_id` names the quoted request the call pays."""

    execution_kind: Literal["rawCalls"] = "rawCalls"
    data: RawCall
    execution_options: ExecutionOptions = ExecutionOptions()
    request_id: str | None = None


class GaslessAccepted(WireModel):
    """The service took the call; follow `request_id` with `wait`."""

    message: str
    request_id: str
