"""Render the deployment file describing a running devnet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w

from crossfill.config.secrets import devnet_account
from crossfill.devnet import accounts
from crossfill.devnet.deploy import DeployedContracts
from crossfill.devnet.seed import DEVNET_ETH_USD
from crossfill.types import NATIVE_EVM_ADDRESS


def _currencies(contracts: DeployedContracts) -> list[dict[str, Any]]:
    return [
        {
            "address": contracts.usdc,
            "symbol": "USDC",
            "name": "USD Coin",
            "decimals": 6,
            "usd_price": "1",
            # TestUSDC takes EIP-3009 authorizations: gasless deposits (`usePermit`).
            "supports_permit": True,
        },
        {
            "address": contracts.weth,
            "symbol": "WETH",
            "name": "Wrapped Ether",
            "decimals": 18,
            "usd_price": str(DEVNET_ETH_USD),
            "price_source": "pool",
        },
    ]


def _pools(contracts: DeployedContracts) -> list[dict[str, Any]]:
    token0, token1 = sorted((contracts.weth, contracts.usdc), key=str.lower)
    return [
        {
            "address": contracts.weth_usdc_pair,
            "source": "uniswap-v2",
            "token0": token0,
            "token1": token1,
        }
    ]


def chain_document(
    *,
    chain_id: int,
    index: int,
    rpc_url: str,
    ws_url: str,
    contracts: DeployedContracts,
    lag_threshold_seconds: float | None,
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "id": chain_id,
        "name": f"crossfill-devnet-{index}",
        "display_name": f"Crossfill Devnet {index}",
        "http_rpc_url": rpc_url,
        "ws_rpc_url": ws_url,
        "tags": ["devnet"],
        "native_currency": {
            "address": NATIVE_EVM_ADDRESS,
            "symbol": "ETH",
            "name": "Ether",
            "decimals": 18,
            "usd_price": str(DEVNET_ETH_USD),
            "price_source": "pool",
        },
        "erc20_currencies": _currencies(contracts),
        "pools": _pools(contracts),
        "contracts": {
            "depository": contracts.depository,
            "filler": contracts.filler,
            "receiver": contracts.receiver,
            "router": contracts.router,
            "approval_proxy": contracts.approval_proxy,
            "multicaller": contracts.multicaller,
            "only_owner_multicaller": contracts.only_owner_multicaller,
            "weth": contracts.weth,
            "uniswap_v2_factory": contracts.uniswap_v2_factory,
            "uniswap_v2_router": contracts.uniswap_v2_router,
            "deposit_address_factory": contracts.deposit_address_factory,
            "gasless_delegate": contracts.gasless_delegate,
            "attestation_verifier": contracts.attestation_verifier,
            "erc7683_origin_settler": contracts.erc7683_origin_settler,
            "erc7683_destination_settler": contracts.erc7683_destination_settler,
            "solver_bond": contracts.solver_bond,
        },
        # anvil serves both kinds of traces: contracts' payments to deposit addresses are seen.
        "trace_internal_transfers": "parity",
        # Value-scaled policy in the shape production uses; devnet blocks are cheap.
        "confirmations": [
            {"max_usd": 1_000, "blocks": 1},
            {"max_usd": 100_000, "blocks": 2},
            {"blocks": 4},
        ],
    }
    if lag_threshold_seconds is not None:
        document["block_lag_threshold_seconds"] = lag_threshold_seconds
    else:
        # Automine makes blocks only on demand: an idle chain is not lagging.
        document.pop("block_lag_threshold_seconds", None)
    return document


def _holder(index: int) -> dict[str, str]:
    return {"address": devnet_account(index).address, "key": f"devnet:{index}"}


def deployment_document(
    chains: list[dict[str, Any]], roles: accounts.Roles = accounts.MAIN_ROLES
) -> dict[str, Any]:
    """The deployment file of the devnet deployment signing with `roles`' keys."""
    return {
        "version": 1,
        "solver": _holder(roles.solver),
        "allocator": _holder(roles.allocator),
        "gasless": {"sponsors": [_holder(roles.gas_sponsor)]},
        "chains": chains,
    }


def write_deployment(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "# Written by `crossfill devnet`; rewritten at every devnet start.\n"
    temporary = path.with_suffix(".toml.tmp")
    temporary.write_text(header + tomli_w.dumps(document))
    temporary.replace(path)
