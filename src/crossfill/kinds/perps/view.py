"""Shape the configured perps exchange plus its live state into the `/chains` wire record.

Its currency is perps USDC (`0x` + 32 zero hex digits, 6 decimals); its ERC-20 list holds the
spot tokens by tokenId (a third-party DEX's currency is the spot address plus the DEX name's
hex). It has no contracts of ours: `protocol.v2.depository` names the solver's exchange
account, which withdrawals from the exchange are sent to.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.kinds.chain_view import (
    ChainLiveStatus,
    ListedCurrencies,
    featured_token,
    listed_token,
    record_without_contracts,
    shown_currency,
)
from crossfill.kinds.chain_wire import Chain, NativeCurrency
from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
    PerpsSpotCurrency,
)

PERPS_USDC = NativeCurrency(
    id="usdc", symbol="USDC", name="USD Coin", address=PERPS_USDC_ADDRESS,
    decimals=PERPS_USDC_DECIMALS, supportsBridging=True,
)  # fmt: skip


@dataclass(frozen=True)
class _PerpsUsdcListing:
    logo_uri: str = ""
    verified: bool = True
    is_native: bool = False


def _spot(currency: PerpsSpotCurrency) -> NativeCurrency:
    return shown_currency(currency, currency.address)


def perps_chain_wire(config: PerpsExchangeConfig, live: ChainLiveStatus) -> Chain:
    spot = config.spot_currencies
    featured = [featured_token(PERPS_USDC, _PerpsUsdcListing())]
    featured += [featured_token(_spot(currency), currency) for currency in spot]
    listed = ListedCurrencies(
        PERPS_USDC,
        featured=featured,
        tokens=[listed_token(_spot(currency)) for currency in spot],
        solver_holds=[PERPS_USDC] + [_spot(c) for c in spot if c.supports_bridging],
    )
    # The exchange's API is its only endpoint: no websocket.
    return record_without_contracts(
        config, live, listed, endpoints=(config.api_url, ""), solver_address=config.solver.address
    )
