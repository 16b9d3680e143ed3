"""Shape a configured SVM chain plus its live state into the `/chains` wire record.

Base58 addresses are shown exactly as configured (never lower-cased). An SVM chain has no
contracts of ours: the EVM contract fields are empty strings, and `protocol.v2.depository`
names the solver vault that deposits go to.
"""

from __future__ import annotations

from crossfill.kinds.chain_view import (
    ChainLiveStatus,
    listed_as_configured,
    record_without_contracts,
)
from crossfill.kinds.chain_wire import Chain
from crossfill.kinds.svm.config import SvmChainConfig


def svm_chain_wire(config: SvmChainConfig, live: ChainLiveStatus) -> Chain:
    currencies = config.currencies
    listed = listed_as_configured(
        config.native_currency,
        featured=[c for c in currencies if c.featured],
        tokens=config.token_currencies,
        held=currencies,
    )
    endpoints = (config.http_rpc_url, config.ws_rpc_url)
    return record_without_contracts(
        config, live, listed, endpoints=endpoints, solver_address=config.solver.address
    )
