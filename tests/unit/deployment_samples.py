"""A valid deployment document to mutate in tests."""

from __future__ import annotations

import copy
from typing import Any

import tomli_w

from crossfill.config.deployment import Deployment, deployment_model
from crossfill.kinds.registry import SECTIONS

ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
SOLVER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

_CHAIN: dict[str, Any] = {
    "id": 900001,
    "name": "crossfill-devnet-1",
    "display_name": "Crossfill Devnet 1",
    "http_rpc_url": "http://127.0.0.1:8545",
    "ws_rpc_url": "ws://127.0.0.1:8545",
    "native_currency": {
        "address": "0x0000000000000000000000000000000000000000",
        "symbol": "ETH",
        "name": "Ether",
        "decimals": 18,
    },
    "erc20_currencies": [
        {
            "address": "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
            "symbol": "USDC",
            "name": "USD Coin",
            "decimals": 6,
        }
    ],
    "contracts": dict.fromkeys(
        (
            "depository",
            "filler",
            "receiver",
            "router",
            "approval_proxy",
            "multicaller",
            "only_owner_multicaller",
        ),
        ADDRESS,
    ),
    "confirmations": [
        {"max_usd": 100, "blocks": 2},
        {"max_usd": 1000, "blocks": 4},
        {"blocks": 32},
    ],
}


def deployment_document(chain_count: int = 2) -> dict[str, Any]:
    chains = []
    for index in range(chain_count):
        chain = copy.deepcopy(_CHAIN)
        chain["id"] = 900001 + index
        chain["name"] = f"crossfill-devnet-{index + 1}"
        chains.append(chain)
    return {
        "solver": {"address": SOLVER, "key": "env:CROSSFILL_SOLVER_KEY"},
        "allocator": {"address": SOLVER, "key": "devnet:2"},
        "chains": chains,
    }


def sample_deployment(chain_count: int = 2) -> Deployment:
    """`deployment_document` read as every kind's sections read it."""
    return deployment_model(SECTIONS).model_validate(deployment_document(chain_count))


def as_toml(document: dict[str, Any]) -> str:
    return tomli_w.dumps(document)
