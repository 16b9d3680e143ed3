"""What the deployment file says of a chain and its currencies for clients to see, whatever
the chain's kind (EVM, SVM, the perps exchange): the fields `/chains` and the token lists show
as written. Each kind's model extends these with what only it has."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import ClassVar, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from crossfill.config.explorer import ExplorerConfig


class ConfigModel(BaseModel):
    """A part of the deployment file: unknown keys refused, immutable once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ChainListing(ConfigModel):
    display_name: str = Field(min_length=1)
    explorer: ExplorerConfig = ExplorerConfig()
    icon_url: str = ""
    logo_url: str = ""
    brand_color: str = ""
    status_message: str | None = None
    deposit_enabled: bool = True
    tags: tuple[str, ...] = ()


class ListedCurrency(ConfigModel):
    symbol: str = Field(min_length=1, max_length=32)
    name: str = Field(min_length=1, max_length=64)
    supports_bridging: bool = True
    featured: bool = True
    verified: bool = True
    logo_uri: str = ""
    # USD per whole unit, as a decimal string ("3000.5"): the fixed price, or the fallback of a
    # live price where the chain has a source of one.
    usd_price: Decimal | None = Field(default=None, gt=0, max_digits=30, decimal_places=6)


class AddressedCurrency(ListedCurrency):
    """A currency at an address of its kind of chain, the kind's native currency at
    `native_address`."""

    native_address: ClassVar[str]
    address: str

    @property
    def is_native(self) -> bool:
        return self.address == self.native_address


class Addressed(Protocol):
    @property
    def address(self) -> str: ...


TokenT = TypeVar("TokenT", bound=Addressed)


def token_list(native: str, field: str) -> Callable[[tuple[TokenT, ...]], tuple[TokenT, ...]]:
    """The check of a chain's list of tokens (`field`, beside its native currency's own field):
    the native currency (`native`) not among them, and no address twice."""

    def checked(tokens: tuple[TokenT, ...]) -> tuple[TokenT, ...]:
        addresses = [token.address for token in tokens]
        if native in addresses:
            raise ValueError(f"the native currency belongs in native_currency, not {field}")
        if len(set(addresses)) != len(addresses):
            raise ValueError("a currency address is listed twice")
        return tokens

    return checked
