"""Chains (`GET /chains`)."""

from __future__ import annotations

from pydantic import JsonValue

from crossfill_client.models._base import WireModel


class ChainCurrency(WireModel):
    id: str | None = None
    symbol: str
    name: str
    address: str
    decimals: int
    supports_bridging: bool | None = None


class ProtocolV2(WireModel):
    chain_id: str
    depository: str | None = None


class ChainProtocol(WireModel):
    v2: ProtocolV2 | None = None


class Chain(WireModel):
    """A chain the service serves. Clients must not transact on a `disabled` one."""

    id: int
    name: str
    display_name: str
    http_rpc_url: str
    ws_rpc_url: str = ""
    vm_type: str
    disabled: bool = False
    block_production_lagging: bool = False
    deposit_enabled: bool = True
    currency: ChainCurrency
    erc20_currencies: tuple[ChainCurrency, ...] = ()
    solver_currencies: tuple[ChainCurrency, ...] = ()
    contracts: dict[str, JsonValue] | None = None
    protocol: ChainProtocol | None = None
    solver_addresses: tuple[str, ...] = ()


class ChainList(WireModel):
    chains: tuple[Chain, ...]
