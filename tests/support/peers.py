"""The peer deployment beside a running devnet, as the suites start it inside a `with`: its
own contracts deployed on every chain of the devnet (the chains' tokens and pool shared), its
solver funded, its deployment file and SQLite database in a home of its own, and `crossfill
run` serving it in a process of its own (`crossfill.devnet.peer`); stopped on the way out."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crossfill.config import Deployment, load_deployment
from crossfill.devnet.peer import (
    PeerChain,
    PeerService,
    deploy_peer,
    start_peer_service,
    write_peer_deployment,
)
from crossfill.kinds.registry import SECTIONS
from crossfill.settings import Mode
from tests.support.devnets import RunningDevnet
from tests.support.service import service_settings, settings_environment


@dataclass
class RunningPeer:
    service: PeerService
    deployment: Deployment
    deployment_path: Path

    @property
    def base_url(self) -> str:
        return self.service.base_url

    def log_tail(self, lines: int = 60) -> str:
        """The end of the peer service's log, for a failing test's message."""
        text = self.service.log_path.read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])


@contextmanager
def running_peer(devnet: RunningDevnet, home: Path, **settings: Any) -> Iterator[RunningPeer]:
    """The peer deployment on `devnet`'s EVM chains, served from `home` with the tests' fast
    polls and `settings` (setting name → value) on top."""
    chains = [
        PeerChain(
            chain.anvil.chain_id,
            chain.anvil.rpc_url,
            chain.anvil.ws_url,
            deploy_peer(chain.anvil.rpc_url, chain.contracts),
        )
        for chain in devnet.network.chains
    ]
    path = home / "deployment.toml"
    write_peer_deployment(path, chains, lag_threshold_seconds=None)
    environment = settings_environment(service_settings(home, path, **settings))
    service = start_peer_service(home, settings=environment)
    try:
        yield RunningPeer(service, load_deployment(path, mode=Mode.DEVNET, sections=SECTIONS), path)
    finally:
        service.stop()
