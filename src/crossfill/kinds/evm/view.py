"""Shape a configured EVM chain plus its live state into the `/chains` wire record: its
currencies with their fees, the contracts of ours it runs, and the Depository."""

from __future__ import annotations

from crossfill.kinds.chain_view import (
    ChainLiveStatus,
    ChainParts,
    ListedCurrencies,
    TokenFees,
    chain_record,
    featured_token,
    listed_token,
    shown_currency,
)
from crossfill.kinds.chain_wire import Chain, ChainContracts, NativeCurrency, RouterContracts
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig


def _native(currency: CurrencyConfig) -> NativeCurrency:
    return shown_currency(currency, currency.address.lower())


def _fees(source: ChainConfig | CurrencyConfig) -> TokenFees:
    return TokenFees(source.withdrawal_fee, source.deposit_fee, source.surge_enabled)


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
        erc7683OriginSettler=contracts.erc7683_origin_settler or "",
        erc7683DestinationSettler=contracts.erc7683_destination_settler or "",
        solverBond=contracts.solver_bond or "",
    )


def chain_wire(config: ChainConfig, live: ChainLiveStatus, *, solver_address: str) -> Chain:
    currencies = (config.native_currency, *config.erc20_currencies)
    tokens = config.erc20_currencies
    parts = ChainParts(
        http_rpc_url=config.http_rpc_url,
        ws_rpc_url=config.ws_rpc_url,
        token_support=config.token_support,
        partial_disable_limit=config.partial_disable_limit,
        currencies=ListedCurrencies(
            _native(config.native_currency),
            featured=[featured_token(_native(c), c) for c in currencies if c.featured],
            tokens=[
                listed_token(_native(c), _fees(c), supports_permit=c.supports_permit)
                for c in tokens
            ],
            solver_holds=[_native(c) for c in currencies if c.supports_bridging],
        ),
        fees=_fees(config),
        contracts=_contracts(config),
        base_chain_id=config.settles_on,
        solver_address=solver_address,
        protocol_chain_id=config.protocol_name,
        depository=config.contracts.depository,
    )
    return chain_record(config, live, parts)
