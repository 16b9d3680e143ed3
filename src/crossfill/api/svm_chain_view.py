"""Shape a configured SVM chain plus its live state into the `/chains` wire record.

Base58 addresses are shown exactly as configured (never lower-cased). An SVM chain has no
contracts of ours: the EVM contract fields are empty strings, and `protocol.v2.depository`
names the solver vault that deposits go to.
"""

from __future__ import annotations

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
from crossfill.config.svm import SvmChainConfig, SvmCurrencyConfig

_NO_ROUTERS = RouterContracts(erc20Router="", approvalProxy="")
_NO_CONTRACTS = ChainContracts(
    multicall3="", multicaller="", onlyOwnerMulticaller="", serviceReceiver="",
    erc20Router="", approvalProxy="", v3=_NO_ROUTERS,
)  # fmt: skip


def _currency(currency: SvmCurrencyConfig) -> NativeCurrency:
    return NativeCurrency(
        id=currency.symbol.lower(),
        symbol=currency.symbol,
        name=currency.name,
        address=currency.address,
        decimals=currency.decimals,
        supportsBridging=currency.supports_bridging,
    )


def _featured(currency: SvmCurrencyConfig) -> FeaturedToken:
    return featured_token(_currency(currency), currency)


def _token(currency: SvmCurrencyConfig) -> Erc20Currency:
    return Erc20Currency(
        **_currency(currency).model_dump(),
        withdrawalFee=0,
        depositFee=0,
        surgeEnabled=False,
        supportsPermit=False,
    )


def _solver_currency(currency: SvmCurrencyConfig) -> SolverCurrency:
    shown = _currency(currency)
    return SolverCurrency(
        id=shown.id,
        symbol=shown.symbol,
        name=shown.name,
        address=shown.address,
        decimals=shown.decimals,
    )


def svm_chain_wire(config: SvmChainConfig, live: ChainLiveStatus) -> Chain:
    explorer = config.explorer
    currencies = config.currencies
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
        depositEnabled=config.deposit_enabled and not live.disabled,
        tokenSupport="Limited",
        disabled=live.disabled,
        partialDisableLimit=0,
        blockProductionLagging=live.lagging,
        currency=_currency(config.native_currency),
        withdrawalFee=0,
        depositFee=0,
        surgeEnabled=False,
        featuredTokens=[_featured(currency) for currency in currencies if currency.featured],
        erc20Currencies=[_token(currency) for currency in config.token_currencies],
        solverCurrencies=[
            _solver_currency(currency) for currency in currencies if currency.supports_bridging
        ],
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
