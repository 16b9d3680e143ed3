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
    Configured,
    listed_as_configured,
    record_without_contracts,
)
from crossfill.kinds.chain_wire import Chain
from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
)


@dataclass(frozen=True)
class _PerpsUsdc:
    """Perps USDC as the exchange's record lists it: featured, and held by the solver."""

    symbol: str = "USDC"
    name: str = "USD Coin"
    address: str = PERPS_USDC_ADDRESS
    decimals: int = PERPS_USDC_DECIMALS
    supports_bridging: bool = True
    logo_uri: str = ""
    verified: bool = True
    is_native: bool = False


PERPS_USDC = _PerpsUsdc()


def perps_chain_wire(config: PerpsExchangeConfig, live: ChainLiveStatus) -> Chain:
    spot = config.spot_currencies
    every: list[Configured] = [PERPS_USDC, *spot]
    listed = listed_as_configured(PERPS_USDC, featured=every, tokens=spot, held=every)
    # The exchange's API is its only endpoint: no websocket.
    return record_without_contracts(
        config, live, listed, endpoints=(config.api_url, ""), solver_address=config.solver.address
    )
