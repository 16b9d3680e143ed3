"""Shape the configured perps exchange plus its live state into the `/chains` wire record.

Its currency is perps USDC (`0x` + 32 zero hex digits, 6 decimals); its ERC-20 list holds the
spot tokens by tokenId (a third-party DEX's currency is the spot address plus the DEX name's
hex). It has no contracts of ours: `protocol.v2.depository` names the solver's exchange
account, which withdrawals from the exchange are sent to.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.api.chain_view import ChainLiveStatus, featured_token
from crossfill.api.schemas.chains import (
    Chain,
    ChainContracts,
    ChainProtocol,
    Erc20Currency,
    ExplorerPaths,
    FeaturedToken,
    NativeCurrency,
    ProtocolV2,
    RouterContracts,
    SolverCurrency,
)
from crossfill.config.perps import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
    PerpsSpotCurrency,
)

_NO_ROUTERS = RouterContracts(erc20Router="", approvalProxy="")
_NO_CONTRACTS = ChainContracts(
    multicall3="", multicaller="", onlyOwnerMulticaller="", serviceReceiver="",
    erc20Router="", approvalProxy="", v3=_NO_ROUTERS,
)  # fmt: skip
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
    return NativeCurrency(
        id=currency.symbol.lower(),
        symbol=currency.symbol,
        name=currency.name,
        address=currency.address,
        decimals=currency.decimals,
        supportsBridging=currency.supports_bridging,
    )


def _token(currency: PerpsSpotCurrency) -> Erc20Currency:
    return Erc20Currency(
        **_spot(currency).model_dump(),
        withdrawalFee=0,
        depositFee=0,
        surgeEnabled=False,
        supportsPermit=False,
    )


def _solver_currency(shown: NativeCurrency) -> SolverCurrency:
    return SolverCurrency(
        id=shown.id, symbol=shown.symbol, name=shown.name, address=shown.address,
        decimals=shown.decimals,
    )  # fmt: skip


def perps_chain_wire(config: PerpsExchangeConfig, live: ChainLiveStatus) -> Chain:
    explorer = config.explorer
    spot = config.spot_currencies
    featured: list[FeaturedToken] = [featured_token(PERPS_USDC, _PerpsUsdcListing())]
    featured += [featured_token(_spot(currency), currency) for currency in spot]
    solver_currencies = [PERPS_USDC] + [_spot(c) for c in spot if c.supports_bridging]
    return Chain(
        id=config.id,
        name=config.name,
        displayName=config.display_name,
        httpRpcUrl=config.api_url,
        wsRpcUrl="",
        explorerUrl=explorer.url,
        explorerName=explorer.name,
        explorerPaths=ExplorerPaths(
            transaction=explorer.transaction_path,
            address=explorer.address_path,
            token=explorer.token_path,
        ),
        depositEnabled=config.deposit_enabled and not live.disabled,
        tokenSupport="Limited",
        disabled=live.disabled,
        partialDisableLimit=0,
        blockProductionLagging=live.lagging,
        currency=PERPS_USDC,
        withdrawalFee=0,
        depositFee=0,
        surgeEnabled=False,
        featuredTokens=featured,
        erc20Currencies=[_token(currency) for currency in spot],
        solverCurrencies=[_solver_currency(shown) for shown in solver_currencies],
        iconUrl=config.icon_url,
        logoUrl=config.logo_url,
        brandColor=config.brand_color,
        statusMessage=live.status_message,
        contracts=_NO_CONTRACTS,
        vmType=config.vm_type,
        baseChainId=config.id,
        solverAddresses=[config.solver.address],
        tags=list(config.tags),
        protocol=ChainProtocol(
            v2=ProtocolV2(chainId=config.name, depository=config.solver.address)
        ),
    )
