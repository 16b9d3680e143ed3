"""The two EVM chains of a devnet's deployment file a bridge bench runs on: the first is the
origin, the second the destination."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BenchChain:
    id: int
    http_url: str
    ws_url: str
    depository: str
    filler: str


@dataclass(frozen=True)
class BridgeChains:
    origin: BenchChain
    destination: BenchChain
    solver: str  # the address that signs fills


def bridge_chains(deployment_path: Path) -> BridgeChains:
    deployment = tomllib.loads(deployment_path.read_text())
    origin, destination = (
        BenchChain(
            id=int(chain["id"]),
            http_url=chain["http_rpc_url"],
            ws_url=chain["ws_rpc_url"],
            depository=chain["contracts"]["depository"],
            filler=chain["contracts"]["filler"],
        )
        for chain in deployment["chains"][:2]
    )
    return BridgeChains(origin, destination, deployment["solver"]["address"])
