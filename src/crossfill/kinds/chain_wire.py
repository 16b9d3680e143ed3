"""The `/chains` record of one chain, whatever its kind (spec "Chain" plus the fields the
official SDK knows)."""

from __future__ import annotations

from pydantic import BaseModel


class NativeCurrency(BaseModel):
    id: str
    symbol: str
    name: str
    address: str
    decimals: int
    supportsBridging: bool


class TokenMetadata(BaseModel):
    logoURI: str
    verified: bool
    isNative: bool


class FeaturedToken(NativeCurrency):
    metadata: TokenMetadata


class Erc20Currency(NativeCurrency):
    withdrawalFee: float
    depositFee: float
    surgeEnabled: bool
    supportsPermit: bool


class SolverCurrency(BaseModel):
    id: str
    symbol: str
    name: str
    address: str
    decimals: int


class RouterContracts(BaseModel):
    erc20Router: str
    approvalProxy: str


class ChainContracts(RouterContracts):
    multicall3: str
    multicaller: str
    onlyOwnerMulticaller: str
    serviceReceiver: str
    v3: RouterContracts
    # ERC-7683 settlers ("" where the chain has none; docs/erc7683.md).
    erc7683OriginSettler: str = ""
    erc7683DestinationSettler: str = ""
    # External solvers' bonds (`SolverBond`); empty where the chain has none.
    solverBond: str = ""


class ProtocolV2(BaseModel):
    chainId: str
    depository: str


class ChainProtocol(BaseModel):
    v2: ProtocolV2


class ExplorerPaths(BaseModel):
    transaction: str
    address: str
    token: str


class Chain(BaseModel):
    id: int
    name: str
    displayName: str
    httpRpcUrl: str
    wsRpcUrl: str
    explorerUrl: str
    explorerName: str
    explorerPaths: ExplorerPaths
    depositEnabled: bool
    tokenSupport: str
    disabled: bool
    partialDisableLimit: float
    blockProductionLagging: bool
    currency: NativeCurrency
    withdrawalFee: float
    depositFee: float
    surgeEnabled: bool
    featuredTokens: list[FeaturedToken]
    erc20Currencies: list[Erc20Currency]
    solverCurrencies: list[SolverCurrency]
    iconUrl: str
    logoUrl: str
    brandColor: str
    statusMessage: str | None
    contracts: ChainContracts
    vmType: str
    baseChainId: int | None
    solverAddresses: list[str]
    tags: list[str]
    protocol: ChainProtocol
