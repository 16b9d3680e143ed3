"""Strict parameter types for routes: the identifier parsers of `domain.identifiers`, as
pydantic/FastAPI annotations, so a malformed value is a 400 before a route runs."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import AfterValidator, BeforeValidator

from crossfill.domain.identifiers import (
    parse_address,
    parse_chain_id,
    parse_row_id,
    parse_text,
    parse_tx_hash,
)
from crossfill.types import Address


def _row_id(value: object) -> int:
    if not isinstance(value, str | int):
        raise ValueError("must be a positive integer")
    return parse_row_id(value, "id")


def _chain_id(value: object) -> int:
    if not isinstance(value, str | int):
        raise ValueError("must be a positive integer")
    return parse_chain_id(value)


def _label(value: str) -> str:
    return parse_text(value, "text", max_length=100)


def _request_id(value: str) -> str:
    return parse_tx_hash(value, "requestId")


def _wallet(value: str) -> Address:
    return parse_address(value, "wallet")


def _claim_id(value: str) -> str:
    return parse_tx_hash(value, "claimId")


RowIdPath = Annotated[int, Path(description="A positive integer id"), BeforeValidator(_row_id)]
ChainIdField = Annotated[int, BeforeValidator(_chain_id)]
Label = Annotated[str, AfterValidator(_label)]
RequestId = Annotated[str, AfterValidator(_request_id)]
_REQUEST_ID = "0x-prefixed 32-byte request id"
RequestIdQuery = Annotated[RequestId, Query(alias="requestId", description=_REQUEST_ID)]
RequestIdPath = Annotated[RequestId, Path(alias="requestId", description=_REQUEST_ID)]
WalletPath = Annotated[
    Address,
    Path(description="0x-prefixed 20-byte address of the wallet"),
    AfterValidator(_wallet),
]
ClaimIdPath = Annotated[
    str,
    Path(alias="claimId", description="0x-prefixed 32-byte claim id"),
    AfterValidator(_claim_id),
]
ChainIdQuery = Annotated[
    int, Query(alias="chainId", description="A chain id"), BeforeValidator(_chain_id)
]
OptionalChainIdQuery = Annotated[
    int | None,
    Query(alias="chainId", description="A chain id"),
    BeforeValidator(lambda value: None if value is None else _chain_id(value)),
]
ReferrerQuery = Annotated[
    str | None,
    Query(description="Integrator name; accepted, unused", max_length=200),
]
