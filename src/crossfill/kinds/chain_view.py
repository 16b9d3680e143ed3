"""Shape a configured chain plus its live state into the `/chains` wire record.

Every kind of chain fills the same record, each in its own `kinds.<kind>.view`: what the
operator wrote about the chain (`ListedChain`), its live status, and what only its kind knows
(`ChainParts`: endpoints, currencies, fees, contracts, the depository). `chain_record` puts
them together, so the record's shape is written once; `record_without_contracts` fills what a
chain without contracts of ours (the SVM chain, the perps exchange) shows alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from crossfill.config.explorer import ExplorerConfig
from crossfill.kinds.chain_wire import (
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

_NO_ROUTERS = RouterContracts(erc20Router="", approvalProxy="")
# A chain without contracts of ours (SVM, the perps exchange): every address empty.
_NO_CONTRACTS = ChainContracts(
    multicall3="", multicaller="", onlyOwnerMulticaller="", serviceReceiver="",
    erc20Router="", approvalProxy="", v3=_NO_ROUTERS,
)  # fmt: skip


@dataclass(frozen=True)
class ChainLiveStatus:
    disabled: bool
    lagging: bool
    status_message: str | None


class ListedChain(Protocol):
    """What the operator writes about a chain of any kind, shown as written."""

    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def display_name(self) -> str: ...

    @property
    def vm_type(self) -> str: ...

    @property
    def explorer(self) -> ExplorerConfig: ...

    @property
    def icon_url(self) -> str: ...

    @property
    def logo_url(self) -> str: ...

    @property
    def brand_color(self) -> str: ...

    @property
    def deposit_enabled(self) -> bool: ...

    @property
    def tags(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class TokenFees:
    withdrawal_fee: float = 0
    deposit_fee: float = 0
    surge_enabled: bool = False


NO_FEES = TokenFees()


@dataclass(frozen=True)
class ListedCurrencies:
    """A chain's currencies as its record lists them: its own, those featured, its token list
    (with their fees), and those the solver holds there."""

    currency: NativeCurrency
    featured: Sequence[FeaturedToken]
    tokens: Sequence[Erc20Currency]
    solver_holds: Sequence[NativeCurrency]


@dataclass(frozen=True)
class ChainParts:
    """The parts of a chain's record that only its kind knows."""

    http_rpc_url: str
    ws_rpc_url: str
    token_support: str
    partial_disable_limit: float
    currencies: ListedCurrencies
    fees: TokenFees
    contracts: ChainContracts
    base_chain_id: int
    solver_address: str
    protocol_chain_id: str
    depository: str


def chain_record(config: ListedChain, live: ChainLiveStatus, parts: ChainParts) -> Chain:
    explorer, currencies = config.explorer, parts.currencies
    return Chain(
        id=config.id,
        name=config.name,
        displayName=config.display_name,
        httpRpcUrl=parts.http_rpc_url,
        wsRpcUrl=parts.ws_rpc_url,
        explorerUrl=explorer.url,
        explorerName=explorer.name,
        explorerPaths=ExplorerPaths(
            transaction=explorer.transaction_path,
            address=explorer.address_path,
            token=explorer.token_path,
        ),
        # A chain disabled (by its configuration or an operator) takes no deposits either.
        depositEnabled=config.deposit_enabled and not live.disabled,
        tokenSupport=parts.token_support,
        disabled=live.disabled,
        partialDisableLimit=parts.partial_disable_limit,
        blockProductionLagging=live.lagging,
        currency=currencies.currency,
        withdrawalFee=parts.fees.withdrawal_fee,
        depositFee=parts.fees.deposit_fee,
        surgeEnabled=parts.fees.surge_enabled,
        featuredTokens=list(currencies.featured),
        erc20Currencies=list(currencies.tokens),
        solverCurrencies=[_solver_currency(shown) for shown in currencies.solver_holds],
        iconUrl=config.icon_url,
        logoUrl=config.logo_url,
        brandColor=config.brand_color,
        statusMessage=live.status_message,
        contracts=parts.contracts,
        vmType=config.vm_type,
        baseChainId=parts.base_chain_id,
        solverAddresses=[parts.solver_address],
        tags=list(config.tags),
        protocol=ChainProtocol(
            v2=ProtocolV2(chainId=parts.protocol_chain_id, depository=parts.depository)
        ),
    )


def record_without_contracts(
    config: ListedChain,
    live: ChainLiveStatus,
    currencies: ListedCurrencies,
    *,
    endpoints: tuple[str, str],
    solver_address: str,
) -> Chain:
    """The record of a chain without contracts of ours (the SVM chain, the perps exchange),
    at its (HTTP, websocket) `endpoints`: a limited token list without fees, every contract
    address empty, its own id as its base chain, its name as the protocol's chain id, and the
    solver's account there as the depository that deposits go to."""
    http_rpc_url, ws_rpc_url = endpoints
    parts = ChainParts(
        http_rpc_url=http_rpc_url,
        ws_rpc_url=ws_rpc_url,
        token_support="Limited",
        partial_disable_limit=0,
        currencies=currencies,
        fees=NO_FEES,
        contracts=_NO_CONTRACTS,
        base_chain_id=config.id,
        solver_address=solver_address,
        protocol_chain_id=config.name,
        depository=solver_address,
    )
    return chain_record(config, live, parts)


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


def listed_token(
    shown: NativeCurrency, fees: TokenFees = NO_FEES, *, supports_permit: bool = False
) -> Erc20Currency:
    """`shown` in the chain's token list, with its fees."""
    return Erc20Currency(
        **shown.model_dump(),
        withdrawalFee=fees.withdrawal_fee,
        depositFee=fees.deposit_fee,
        surgeEnabled=fees.surge_enabled,
        supportsPermit=supports_permit,
    )


def _solver_currency(shown: NativeCurrency) -> SolverCurrency:
    return SolverCurrency(
        id=shown.id, symbol=shown.symbol, name=shown.name, address=shown.address,
        decimals=shown.decimals,
    )  # fmt: skip


class Shown(Protocol):
    """What a chain lists of one of its currencies, on any kind of chain."""

    @property
    def symbol(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def decimals(self) -> int: ...

    @property
    def supports_bridging(self) -> bool: ...


def shown_currency(currency: Shown, address: str) -> NativeCurrency:
    """`currency` as its chain lists it, at `address` as that kind of chain writes it (EVM
    addresses lower-cased; base58 and the exchange's ids exactly as configured)."""
    return NativeCurrency(
        id=currency.symbol.lower(),
        symbol=currency.symbol,
        name=currency.name,
        address=address,
        decimals=currency.decimals,
        supportsBridging=currency.supports_bridging,
    )


class Configured(Shown, Listed, Protocol):
    """A currency configured at its address as its chain writes it (base58, the exchange's
    ids: shown exactly as configured, never lower-cased)."""

    @property
    def address(self) -> str: ...


def _as_configured(currency: Configured) -> NativeCurrency:
    return shown_currency(currency, currency.address)


def listed_as_configured(
    currency: Configured,
    *,
    featured: Iterable[Configured],
    tokens: Iterable[Configured],
    held: Iterable[Configured],
) -> ListedCurrencies:
    """A chain's currencies at their configured addresses: its own (`currency`), those
    `featured`, its token list (without fees), and those of `held` the solver bridges."""
    return ListedCurrencies(
        _as_configured(currency),
        featured=[featured_token(_as_configured(c), c) for c in featured],
        tokens=[listed_token(_as_configured(c)) for c in tokens],
        solver_holds=[_as_configured(c) for c in held if c.supports_bridging],
    )
