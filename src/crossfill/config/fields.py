"""Validated field types shared by the deployment models."""

from __future__ import annotations

import re
from typing import Annotated

from eth_utils.address import is_address, to_checksum_address
from pydantic import AfterValidator, BeforeValidator, Field

from crossfill.domain.identifiers import is_address as is_hex_address
from crossfill.types import Address


def _checksummed(value: object) -> Address:
    """A 20-byte hex address, checksummed; a mixed-case one must carry a valid checksum."""
    if not is_hex_address(value) or not is_address(value):
        raise ValueError("must be a 0x-prefixed 20-byte hex address")
    return Address(to_checksum_address(value))


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
