"""The devnet exchange's `[perps]` entry in the deployment file, and its seeding."""

from __future__ import annotations

from typing import Any, Final

import httpx

from crossfill.config import Deployment
from crossfill.devnet import accounts
from crossfill.devnet.exchange.process import fund
from crossfill.devnet.exchange.tokens import SPOT_TOKENS
from crossfill.kinds.perps.config import PERPS_CHAIN_ID, perps_exchange

DEVNET_EXCHANGE_CHAIN: Final = "Testnet"
# Arbitrum Sepolia's id, which the exchange's own SDK signs testnet actions with.
DEVNET_SIGNATURE_CHAIN_ID: Final = "0x66eee"
SOLVER_PERPS_USD: Final = "1000000"
SOLVER_SPOT: Final = {"USDC": "1000000", "HYPE": "10000"}
DEVNET_HYPE_USD: Final = "25"


def exchange_url(deployment: Deployment) -> str | None:
    """The URL the devnet's own processes reach its exchange at; None: the file has none."""
    exchange = perps_exchange(deployment)
    return None if exchange is None else exchange.rpc_url


def perps_document(*, api_url: str) -> dict[str, Any]:
    usd_prices = {"USDC": "1", "HYPE": DEVNET_HYPE_USD}
    return {
        "id": PERPS_CHAIN_ID,
        "name": "crossfill-devnet-perps",
        "display_name": "Crossfill Devnet Perps",
        "api_url": api_url,
        "exchange_chain": DEVNET_EXCHANGE_CHAIN,
        "signature_chain_id": DEVNET_SIGNATURE_CHAIN_ID,
        "solver": {"address": accounts.solver().address, "key": f"devnet:{accounts.SOLVER_INDEX}"},
        "tags": ["devnet"],
        "poll_interval_seconds": 0.2,
        "spot_currencies": [
            {
                "token_id": token.token_id,
                "exchange_name": token.name,
                "symbol": token.name,
                "name": token.name,
                "decimals": token.wei_decimals,
                "usd_price": usd_prices[token.name],
            }
            for token in SPOT_TOKENS
        ],
    }


def seed_exchange(api_url: str) -> None:
    """Fund the solver's exchange account, once per state file (a restart keeps balances)."""
    solver = accounts.solver().address
    state = httpx.post(
        f"{api_url}/info", json={"type": "clearinghouseState", "user": solver}, timeout=10
    ).json()
    if state["withdrawable"] != "0.0":
        return
    fund(api_url, solver, SOLVER_PERPS_USD)
    for token, amount in SOLVER_SPOT.items():
        fund(api_url, solver, amount, token)
