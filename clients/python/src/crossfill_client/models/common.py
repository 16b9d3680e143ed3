"""What amounts everywhere are made of: currencies and Amount objects."""

from __future__ import annotations

from pydantic import Field

from crossfill_client.models._base import WireModel


class CurrencyMetadata(WireModel):
    logo_uri: str | None = Field(default=None, alias="logoURI")
    verified: bool | None = None
    is_native: bool | None = None


class Currency(WireModel):
    """A currency on a chain: `address` is the chain's own form (EVM hex, SVM base58)."""

    chain_id: int
    address: str
    symbol: str
    name: str
    decimals: int
    metadata: CurrencyMetadata | None = None


class Amount(WireModel):
    """An amount of `currency`; `amount` and `minimum_amount` are integers in its smallest
    unit, `amount_formatted` and `amount_usd` decimal text."""

    currency: Currency
    amount: int
    amount_formatted: str
    amount_usd: str | None = None
    minimum_amount: int | None = None


class UsdValue(WireModel):
    usd: str
