"""A two-chain deployment and hand-set chain snapshots for planning quotes without chains."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from crossfill.api.schemas.quote import QuoteBody
from crossfill.config import Deployment
from crossfill.config.deployment import deployment_model
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.config import evm_chains
from crossfill.kinds.evm.market import MarketSnapshot
from crossfill.kinds.evm.state import ChainState
from crossfill.kinds.registry import SECTIONS
from crossfill.quoting.engine import ChainView, Entropy, Quote, plan_quote
from crossfill.quoting.request import QuoteRequest
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
USER = "0x" + "ab" * 20
USDC = "0x" + "11" * 20
WETH = "0x" + "22" * 20
PAIR = "0x" + "33" * 20
CONTRACT = "0x" + "44" * 20
UNISWAP_ROUTER = "0x" + "55" * 20
SOLVER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
CHAINS = (900001, 900002)
ETHER = 10**18


def _chain(chain_id: int) -> dict[str, object]:
    return {
        "id": chain_id,
        "name": f"devnet-{chain_id}",
        "display_name": f"Devnet {chain_id}",
        "http_rpc_url": "http://127.0.0.1:8545",
        "native_currency": {
            "address": NATIVE_EVM_ADDRESS,
            "symbol": "ETH",
            "name": "Ether",
            "decimals": 18,
            "usd_price": "3000",
            "price_source": "pool",
        },
        "erc20_currencies": [
            {
                "address": USDC,
                "symbol": "USDC",
                "name": "USD Coin",
                "decimals": 6,
                "usd_price": "1",
                "supports_permit": True,
            },
            {
                "address": WETH,
                "symbol": "WETH",
                "name": "Wrapped Ether",
                "decimals": 18,
                "usd_price": "3000",
                "price_source": "pool",
            },
        ],
        "contracts": {
            **dict.fromkeys(
                (
                    "depository",
                    "filler",
                    "receiver",
                    "router",
                    "approval_proxy",
                    "multicaller",
                    "only_owner_multicaller",
                ),
                CONTRACT,
            ),
            "weth": WETH,
            "uniswap_v2_router": UNISWAP_ROUTER,
        },
        "pools": [{"address": PAIR, "token0": USDC, "token1": WETH}],
    }


def deployment(**fees: object) -> Deployment:
    chains = [_chain(chain_id) for chain_id in CHAINS]
    for chain in chains:
        chain["fees"] = fees
    return deployment_model(SECTIONS).model_validate(
        {
            "solver": {"address": SOLVER, "key": "devnet:1"},
            "allocator": {"address": SOLVER, "key": "devnet:2"},
            "chains": chains,
        }
    )


def views(
    config: Deployment,
    *,
    usdc_reserve: int = 3_000_000 * 10**6,
    weth_reserve: int = 1_000 * ETHER,
    base_fee: int = 10**9,
) -> dict[int, ChainView]:
    result: dict[int, ChainView] = {}
    for chain in evm_chains(config):
        state = ChainState(chain_id=ChainId(chain.id), lag_threshold_seconds=None, started_at=0)
        state.record_head(
            BlockHead(number=100, timestamp=0, hash="0x00", base_fee_per_gas=base_fee), 0
        )
        state.priority_fee_per_gas = 10**8
        state.solver_balances = {NATIVE_EVM_ADDRESS: 10**40, USDC: 10**40, WETH: 10**40}
        state.market = MarketSnapshot(reserves={PAIR: (usdc_reserve, weth_reserve)}, feed_rounds={})
        result[chain.id] = ChainView(config=chain, state=state, disabled=False)
    return result


def body(**fields: object) -> QuoteRequest:
    document: dict[str, object] = {
        "user": USER,
        "originChainId": CHAINS[0],
        "destinationChainId": CHAINS[1],
        "originCurrency": NATIVE_EVM_ADDRESS,
        "destinationCurrency": USDC,
        "amount": str(ETHER),
        "tradeType": "EXACT_INPUT",
    }
    document.update(fields)
    return QuoteBody.model_validate(document).to_request()


def quote(
    quote_body: QuoteRequest,
    config: Deployment | None = None,
    chain_views: dict[int, ChainView] | None = None,
) -> Quote:
    config = config or deployment()
    return plan_quote(
        quote_body,
        chains=chain_views or views(config),
        deployment=config,
        now=NOW,
        entropy=Entropy(request_id=os.urandom(32), salt=1),
    )
