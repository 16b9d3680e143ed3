"""Shape a configured SVM chain plus its live state into the `/chains` wire record.

Base58 addresses are shown exactly as configured (never lower-cased). An SVM chain has no
contracts of ours: the EVM contract fields are empty strings, and `protocol.v2.depository`
names the solver vault that deposits go to.
"""

from __future__ import annotations

from crossfill.kinds.chain_view import (
    ChainLiveStatus,
    ListedCurrencies,
    featured_token,
    listed_token,
    record_without_contracts,
    shown_currency,
)
from crossfill.kinds.chain_wire import Chain, NativeCurrency
from crossfill.kinds.svm.config import SvmChainConfig, SvmCurrencyConfig


def _shown(currency: SvmCurrencyConfig) -> NativeCurrency:
    return shown_currency(currency, currency.address)


def svm_chain_wire(config: SvmChainConfig, live: ChainLiveStatus) -> Chain:
    currencies = config.currencies
    listed = ListedCurrencies(
        _shown(config.native_currency),
        featured=[featured_token(_shown(c), c) for c in currencies if c.featured],
        tokens=[listed_token(_shown(c)) for c in config.token_currencies],
        solver_holds=[_shown(c) for c in currencies if c.supports_bridging],
    )
    endpoints = (config.http_rpc_url, config.ws_rpc_url)
    return record_without_contracts(
        config, live, listed, endpoints=endpoints, solver_address=config.solver.address
    )
