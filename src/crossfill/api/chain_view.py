"""Shape a configured chain plus its live state into the `/chains` wire record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

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
    TokenMetadata,
)
from crossfill.config import ChainConfig, CurrencyConfig


@dataclass(frozen=True)
class ChainLiveStatus:
    disabled: bool
    lagging: bool
    status_message: str | None


def _currency_id(currency: CurrencyConfig) -> str:
    return currency.symbol.lower()


def _native(currency: CurrencyConfig) -> NativeCurrency:
    return NativeCurrency(
        id=_currency_id(currency),
        symbol=currency.symbol,
        name=currency.name,
        address=currency.address.lower(),
        decimals=currency.decimals,
        supportsBridging=currency.supports_bridging,
    )


class Listed(Protocol):
    """What a featured token shows of its currency, on either kind of chain."""

    @property
    def logo_uri(self) -> str: ...

    @property
    def verified(self) -> bool: ...

    @property
    def is_native(self) -> bool: ...


def featured_token(shown: NativeCurrency, currency: Listed) -> FeaturedToken:
    """`shown` (the currency as the chain lists it) with its token-list metadata."""
    return FeaturedToken(
        **shown.model_dump(),
        metadata=TokenMetadata(
            logoURI=currency.logo_uri, verified=currency.verified, isNative=currency.is_native
        ),
    )


def _featured(currency: CurrencyConfig) -> FeaturedToken:
    return featured_token(_native(currency), currency)


def _erc20(currency: CurrencyConfig) -> Erc20Currency:
    return Erc20Currency(
        **_native(currency).model_dump(),
        withdrawalFee=currency.withdrawal_fee,
        depositFee=currency.deposit_fee,
        surgeEnabled=currency.surge_enabled,
        supportsPermit=currency.supports_permit,
    )


def _solver_currency(currency: CurrencyConfig) -> SolverCurrency:
    native = _native(currency)
    return SolverCurrency(
        id=native.id,
        symbol=native.symbol,
        name=native.name,
        address=native.address,
        decimals=native.decimals,
    )


def _contracts(config: ChainConfig) -> ChainContracts:
    contracts = config.contracts
    routers = RouterContracts(erc20Router=contracts.router, approvalProxy=contracts.approval_proxy)
    return ChainContracts(
        multicall3=contracts.multicall3 or contracts.multicaller,
        multicaller=contracts.multicaller,
        onlyOwnerMulticaller=contracts.only_owner_multicaller,
        serviceReceiver=contracts.receiver,
        erc20Router=contracts.router,
        approvalProxy=contracts.approval_proxy,
        v3=routers,
    )


def chain_wire(config: ChainConfig, live: ChainLiveStatus, *, solver_address: str) -> Chain:
    currencies = (config.native_currency, *config.erc20_currencies)
    explorer = config.explorer
    return Chain(
        id=config.id,
        name=config.name,
        displayName=config.display_name,
        httpRpcUrl=config.http_rpc_url,
        wsRpcUrl=config.ws_rpc_url,
        explorerUrl=explorer.url,
        explorerName=explorer.name,
        explorerPaths=ExplorerPaths(
            transaction=explorer.transaction_path,
            address=explorer.address_path,
            token=explorer.token_path,
        ),
        # A chain disabled (by its configuration or an operator) takes no deposits either.
        depositEnabled=config.deposit_enabled and not live.disabled,
        tokenSupport=config.token_support,
        disabled=live.disabled,
        partialDisableLimit=config.partial_disable_limit,
        blockProductionLagging=live.lagging,
        currency=_native(config.native_currency),
        withdrawalFee=config.withdrawal_fee,
        depositFee=config.deposit_fee,
        surgeEnabled=config.surge_enabled,
        featuredTokens=[_featured(currency) for currency in currencies if currency.featured],
        erc20Currencies=[_erc20(currency) for currency in config.erc20_currencies],
        solverCurrencies=[
            _solver_currency(currency) for currency in currencies if currency.supports_bridging
        ],
        iconUrl=config.icon_url,
        logoUrl=config.logo_url,
        brandColor=config.brand_color,
        statusMessage=live.status_message,
        contracts=_contracts(config),
        vmType=config.vm_type,
        baseChainId=config.settles_on,
        solverAddresses=[solver_address],
        tags=list(config.tags),
        protocol=ChainProtocol(
            v2=ProtocolV2(chainId=config.protocol_name, depository=config.contracts.depository)
        ),
    )
