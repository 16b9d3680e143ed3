"""Validated field types shared by the deployment models."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field
from web3 import Web3

from crossfill.types import Address

_HEX_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")


def _checksummed(value: object) -> Address:
    if not isinstance(value, str) or not _HEX_ADDRESS.match(value) or not Web3.is_address(value):
        raise ValueError("must be a 0x-prefixed 20-byte hex address")
    return Address(Web3.to_checksum_address(value))


def _http_url(value: str) -> str:
    if not re.match(r"^https?://[^\s/]+", value):
        raise ValueError("must be an http:// or https:// URL")
    return value


def _ws_url(value: str) -> str:
    if value and not re.match(r"^wss?://[^\s/]+", value):
        raise ValueError("must be a ws:// or wss:// URL, or empty")
    return value


EvmAddress = Annotated[Address, BeforeValidator(_checksummed)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]
WsUrl = Annotated[str, AfterValidator(_ws_url)]
Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)]
