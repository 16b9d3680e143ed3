"""Shape a configured SVM chain plus its live state into the `/chains` wire record.

Base58 addresses are shown exactly as configured (never lower-cased). An SVM chain has no
contracts of ours: the EVM contract fields are empty strings, and `protocol.v2.depository`
names the solver vault that deposits go to.
"""

from __future__ import annotations

from crossfill.kinds.chain_view import (
    NO_CONTRACTS,
    NO_FEES,
    ChainLiveStatus,
    ChainParts,
    chain_record,
    featured_token,
    listed_token,
    shown_currency,
)
from crossfill.kinds.chain_wire import (
    Chain,
    NativeCurrency,
)
from crossfill.kinds.svm.config import SvmChainConfig, SvmCurrencyConfig


def _shown(currency: SvmCurrencyConfig) -> NativeCurrency:
    return shown_currency(currency, currency.address)


def svm_chain_wire(config: SvmChainConfig, live: ChainLiveStatus) -> Chain:
    currencies = config.currencies
    parts = ChainParts(
        http_rpc_url=config.http_rpc_url,
        ws_rpc_url=config.ws_rpc_url,
        token_support="Limited",
        partial_disable_limit=0,
        currency=_shown(config.native_currency),
        fees=NO_FEES,
        featured_tokens=[featured_token(_shown(c), c) for c in currencies if c.featured],
        erc20_currencies=[listed_token(_shown(c)) for c in config.token_currencies],
        solver_currencies=[_shown(c) for c in currencies if c.supports_bridging],
        contracts=NO_CONTRACTS,
        base_chain_id=config.id,
        solver_address=config.solver.address,
        protocol_chain_id=config.name,
        depository=config.solver.address,
    )
    return chain_record(config, live, parts)
