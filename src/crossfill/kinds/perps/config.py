"""The perps exchange (chain 1337) in the deployment file (`[perps]`).

The exchange is not a chain of ours: balances are held by it and moved by user-signed actions
posted to its HTTP API (`api_url`: the real exchange's in production, the devnet exchange's on
the devnet). The solver's exchange account is an EVM key, referenced like the other keys.

Currency addresses on 1337 (spec, chain-specific identifiers): perps USDC is `0x` followed by
32 zero hex digits; a spot token is its `tokenId` from the exchange's `spotMeta`; a currency
on a third-party DEX of the exchange is the spot address followed by the hex of the DEX's name
(`PerpsSpotCurrency.dex`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Final, Literal

from pydantic import Field, field_validator, model_validator

from crossfill.config.fields import EvmAddress, HttpUrl, Slug
from crossfill.config.listing import ChainListing, ConfigModel
from crossfill.config.secrets import KeyRef
from crossfill.config.sections import ConfigSection
from crossfill.quoting.money import to_usd_micros, usd_micros_per_unit
from crossfill.types import ChainId, ExchangeChain

if TYPE_CHECKING:
    from crossfill.config.deployment import Deployment

PERPS_CHAIN_ID: Final = ChainId(1337)
PERPS_USDC_ADDRESS: Final = "0x" + "0" * 32
# The exchange's perps side counts USD in millionths (as the USDC it is bridged from).
PERPS_USDC_DECIMALS: Final = 6
_TOKEN_ID = re.compile(r"^0x[0-9a-f]{32}$")
_SIGNATURE_CHAIN_ID = re.compile(r"^0x[0-9a-f]{1,16}$")


class PerpsAccount(ConfigModel):
    """The solver's exchange account (an EVM address) and where its key comes from."""

    address: EvmAddress
    key: KeyRef


class PerpsSpotCurrency(ConfigModel):
    """A spot token of the exchange: its `tokenId` (lower-case hex) and its `spotMeta` name."""

    token_id: str
    exchange_name: str = Field(min_length=1, max_length=32)
    symbol: str = Field(min_length=1, max_length=32)
    name: str = Field(min_length=1, max_length=64)
    decimals: int = Field(ge=0, le=18)  # the token's weiDecimals
    # A third-party DEX of the exchange it lives on; "" for the spot DEX itself.
    dex: str = Field(default="", max_length=32)
    supports_bridging: bool = False
    verified: bool = True
    logo_uri: str = ""
    usd_price: Decimal | None = Field(default=None, gt=0, max_digits=30, decimal_places=6)

    @field_validator("token_id")
    @classmethod
    def _token_id(cls, value: str) -> str:
        if not _TOKEN_ID.match(value):
            raise ValueError("must be the exchange's tokenId: 0x and 32 lower-case hex digits")
        return value

    @property
    def address(self) -> str:
        """The currency's address on 1337: the tokenId, plus the DEX name's hex if any."""
        return self.token_id + self.dex.encode().hex()

    @property
    def is_native(self) -> bool:
        return False

    @property
    def wire_token(self) -> str:
        """How a `spotSend`/`sendAsset` names it."""
        return f"{self.exchange_name}:{self.token_id}"


@dataclass(frozen=True)
class FeeCurrency:
    """The currency the solver's exchange account keeps for fees: its address on 1337."""

    address: str
    decimals: int
    symbol: str


class PerpsKeyGas(ConfigModel):
    """What the solver's exchange account keeps for the exchange's fees (`[perps.key_gas]`):
    the exchange charges a sender 1 USDC the first time it sends to an account that does not
    exist yet, and a withdrawal to another chain costs its fee too. Below `minimum` (whole
    units of `currency`: perps USDC, or a spot currency of the spot DEX) the exchange shows on
    `/readyz` (`keysLowOnGas`), `/chains` and `crossfill_key_gas_low`; nothing of the service
    on the exchange can top it up."""

    currency: str = PERPS_USDC_ADDRESS
    minimum: Decimal = Field(default=Decimal(5), ge=0, max_digits=30, decimal_places=8)
    # How often the balance is read (an /info read of weight 2, shared with quotes' reads).
    check_interval_seconds: float = Field(default=30, gt=0)


class PerpsExchangeConfig(ChainListing):
    id: ChainId = Field(default=PERPS_CHAIN_ID, gt=0)
    name: Slug = "perps-exchange"
    display_name: str = Field(default="Perps Exchange", min_length=1)
    vm_type: Literal["hypevm"] = "hypevm"
    # Where the exchange's `/exchange` and `/info` are; `internal_api_url` when our processes
    # reach it elsewhere.
    api_url: HttpUrl
    internal_api_url: HttpUrl | None = None
    # The chain name the actions sign (`hyperliquidChain`): the exchange refuses the other.
    exchange_chain: ExchangeChain = "Mainnet"
    # The EIP-712 domain's chain id the solver signs with, hex ("0xa4b1"); any chain works.
    signature_chain_id: str = "0xa4b1"
    solver: PerpsAccount
    enabled: bool = True
    # How a `sendAsset` names USDC (`NAME:0x<tokenId>`, the spot token the perps side holds).
    usdc_token: str = Field(
        default="USDC:0x6d1e7cde53ba9467b783cb7c530ce054", pattern=r"^[A-Za-z0-9]+:0x[0-9a-f]{32}$"
    )
    usdc_usd_price: Decimal = Field(default=Decimal(1), gt=0, decimal_places=6)
    spot_currencies: tuple[PerpsSpotCurrency, ...] = ()
    # How often the watcher reads the solver's ledger for transfers in. Each read is an /info
    # `userNonFundingLedgerUpdates` of weight 20, and the public API allows an IP 1,200 weight
    # a minute for every request together: each 2 s spends half of it (each 1 s, all of it,
    # and the exchange would answer the rest 429). Lower it only against a node of your own.
    poll_interval_seconds: float = Field(default=2.0, gt=0)
    key_gas: PerpsKeyGas = PerpsKeyGas()

    @field_validator("signature_chain_id")
    @classmethod
    def _hex_chain_id(cls, value: str) -> str:
        if not _SIGNATURE_CHAIN_ID.match(value):
            raise ValueError("must be a lower-case hex chain id such as 0xa4b1")
        return value

    @model_validator(mode="after")
    def _fee_currency_read(self) -> PerpsExchangeConfig:
        wanted = self.key_gas.currency.lower()
        spot = self.spot_currency(wanted)
        if wanted != PERPS_USDC_ADDRESS and (spot is None or spot.dex):
            raise ValueError(
                "key_gas.currency: perps USDC or a spot_currencies entry of the spot DEX"
            )
        return self

    def fee_currency(self) -> FeeCurrency:
        """The currency the solver's account keeps for fees (`key_gas.currency`)."""
        spot = self.spot_currency(self.key_gas.currency)
        if spot is None:
            return FeeCurrency(PERPS_USDC_ADDRESS, PERPS_USDC_DECIMALS, "USDC")
        return FeeCurrency(spot.address, spot.decimals, spot.symbol)

    def fee_minimum(self) -> int:
        """`key_gas.minimum` in the fee currency's smallest unit."""
        return int(self.key_gas.minimum.scaleb(self.fee_currency().decimals))

    @model_validator(mode="after")
    def _unique_currencies(self) -> PerpsExchangeConfig:
        addresses = [c.address for c in self.spot_currencies]
        if PERPS_USDC_ADDRESS in addresses or len(set(addresses)) != len(addresses):
            raise ValueError("spot_currencies: a currency address is listed twice")
        return self

    @property
    def signature_chain(self) -> int:
        return int(self.signature_chain_id, 16)

    @property
    def rpc_url(self) -> str:
        """The URL our own processes call."""
        return self.internal_api_url or self.api_url

    def spot_currency(self, address: str) -> PerpsSpotCurrency | None:
        wanted = address.lower()
        return next((c for c in self.spot_currencies if c.address == wanted), None)

    def usd_value(self, address: str, amount: int) -> int | None:
        """`amount` of the currency at `address` in micro-USD, at the configured prices; None
        for a currency not configured or unpriced."""
        if address.lower() == PERPS_USDC_ADDRESS:
            decimals, price = PERPS_USDC_DECIMALS, self.usdc_usd_price
        else:
            spot = self.spot_currency(address)
            if spot is None or spot.usd_price is None:
                return None
            decimals, price = spot.decimals, spot.usd_price
        return to_usd_micros(amount, decimals, usd_micros_per_unit(price))

    @property
    def disabled(self) -> bool:
        """As every chain says it: the exchange's section says `enabled`."""
        return not self.enabled

    @property
    def protocol_name(self) -> str:
        """The chain's name in the protocol (orders and records): its name."""
        return self.name

    def key_references(self) -> Mapping[str, str]:
        return {"perps.solver": self.solver.key}


PERPS_SECTION: Final = ConfigSection("perps", PerpsExchangeConfig, single=True)


def perps_exchange(deployment: Deployment) -> PerpsExchangeConfig | None:
    """The deployment's perps exchange (`[perps]`), if it has one."""
    return next(iter(deployment.section(PERPS_SECTION)), None)
