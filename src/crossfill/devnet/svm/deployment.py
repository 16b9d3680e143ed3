"""The `[[svm_chains]]` entry of the deployment file describing the devnet SVM chain."""

from __future__ import annotations

from typing import Any

from crossfill.devnet.svm import accounts
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.svm.config import SVM_CHAIN_ID
from crossfill.types import NATIVE_SVM_ADDRESS

DEVNET_SOL_USD = "150"


def svm_chain_document(*, rpc_url: str, ws_url: str, seeded: SeededSvm) -> dict[str, Any]:
    return {
        "id": SVM_CHAIN_ID,
        "name": "crossfill-devnet-svm",
        "display_name": "Crossfill Devnet SVM",
        "http_rpc_url": rpc_url,
        "ws_rpc_url": ws_url,
        "tags": ["devnet"],
        # Slots come every 400 ms; ten seconds without one is an outage.
        "block_lag_threshold_seconds": 10,
        "solver": {"address": str(seeded.solver), "key": "devnet-svm:solver"},
        "native_currency": {
            "address": NATIVE_SVM_ADDRESS,
            "symbol": "SOL",
            "name": "Solana",
            "decimals": 9,
            "usd_price": DEVNET_SOL_USD,
        },
        "token_currencies": [
            {
                "address": str(seeded.usdc_mint),
                "symbol": "USDC",
                "name": "USD Coin",
                "decimals": accounts.USDC_DECIMALS,
                "usd_price": "1",
            }
        ],
    }
