"""The peer deployment: a second, independent Crossfill on the devnet's chains.

Its own keys (`accounts.PEER_ROLES`, further along the public mnemonic), its own Depository,
Filler and the rest deployed on every anvil chain beside the main deployment's (the tokens and
the pool are the chain's, shared), its own solver funded, its own deployment file, database and
port: a service the main one reaches only through the public HTTP interface, as it would any
compatible provider (the bridge adapter of docs/treasury.md)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from crossfill.config.secrets import devnet_account
from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.child_process import LOOPBACK, ChildProcess, free_port, spawn
from crossfill.devnet.deploy import ChainAssets, DeployedContracts, deploy_service, signing_web3
from crossfill.devnet.deployment_file import chain_document, deployment_document, write_deployment
from crossfill.devnet.seed import ETHER, USDC_UNIT, Funding, seed_solver
from crossfill.errors import DevnetError
from crossfill.types import Address

# What the peer's solver holds on every chain: less than the main solver, so its limits show.
PEER_SOLVER_FUNDING = Funding(native=1_000 * ETHER, usdc=1_000_000 * USDC_UNIT, weth=100 * ETHER)
# A service starts in seconds (migrations, the first head of every chain).
PEER_READY_TIMEOUT_SECONDS = 60.0
# The peer's files, beside the main deployment's: `<home>/peer/`.
PEER_DIRECTORY = "peer"


def peer_home(main_home: Path) -> Path:
    """Where the peer keeps its deployment file and database, beside the main deployment's."""
    return main_home / PEER_DIRECTORY


def deploy_peer(rpc_url: str, assets: ChainAssets | DeployedContracts) -> DeployedContracts:
    """The peer's own contracts on one chain, on the chain's tokens and pool (`assets`), and
    its solver funded with `PEER_SOLVER_FUNDING`, its Filler approved."""
    roles = accounts.PEER_ROLES
    deployer = devnet_account(roles.deployer)
    chain_assets = ChainAssets(
        usdc=assets.usdc,
        weth=assets.weth,
        uniswap_v2_factory=assets.uniswap_v2_factory,
        uniswap_v2_router=assets.uniswap_v2_router,
        weth_usdc_pair=assets.weth_usdc_pair,
    )
    # The peer's deployer pays its own gas: given it by the chain, as the main deployer is.
    set_native_balance(rpc_url, deployer.address, 1_000 * ETHER)
    contracts = deploy_service(
        signing_web3(rpc_url, deployer),
        chain_assets,
        owner=Address(deployer.address),
        solver=Address(devnet_account(roles.solver).address),
        allocator=Address(devnet_account(roles.allocator).address),
    )
    seed_solver(
        rpc_url,
        contracts,
        deployer=devnet_account(accounts.DEPLOYER_INDEX),  # the tokens' owner mints
        solver=devnet_account(roles.solver),
        funding=PEER_SOLVER_FUNDING,
    )
    set_native_balance(rpc_url, devnet_account(roles.gas_sponsor).address, 100 * ETHER)
    return contracts


@dataclass(frozen=True)
class PeerChain:
    """One chain as the peer's deployment file describes it."""

    chain_id: int
    rpc_url: str
    ws_url: str
    contracts: DeployedContracts


def write_peer_deployment(
    path: Path, chains: Sequence[PeerChain], *, lag_threshold_seconds: float | None
) -> None:
    """The peer's deployment file: the same chains, its own contracts and keys."""
    documents = [
        chain_document(
            chain_id=chain.chain_id,
            index=index,
            rpc_url=chain.rpc_url,
            ws_url=chain.ws_url,
            contracts=chain.contracts,
            lag_threshold_seconds=lag_threshold_seconds,
        )
        for index, chain in enumerate(chains, start=1)
    ]
    write_deployment(path, deployment_document(documents, accounts.PEER_ROLES))


@dataclass(kw_only=True)
class PeerService(ChildProcess):
    """`crossfill run` on the peer's deployment file, home and database."""

    home: Path

    @property
    def base_url(self) -> str:
        return self.rpc_url


def _environment(home: Path, port: int, settings: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without its own Crossfill settings (the peer has its own
    home, database, deployment file and port), with `settings` (`CROSSFILL_*` names) over."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("CROSSFILL_")}
    for name in ("CROSSFILL_LOG_LEVEL", "CROSSFILL_JSON_LOGS"):
        if name in os.environ:
            inherited[name] = os.environ[name]
    return {
        **inherited,
        "CROSSFILL_MODE": "devnet",
        "CROSSFILL_HOME": str(home),
        "CROSSFILL_PORT": str(port),
        **settings,
    }


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def start_peer_service(
    home: Path,
    *,
    port: int | None = None,
    log_path: Path | None = None,
    settings: Mapping[str, str] | None = None,
) -> PeerService:
    """The peer service on `home` (its `deployment.toml` written by `write_peer_deployment`;
    its SQLite database there), on `port` (default: a free one), answering `/healthz`; it dies
    with this process. `settings`: more `CROSSFILL_*` variables for it."""
    chosen = port or free_port()
    log = log_path or home / "service.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    process = spawn(
        [sys.executable, "-m", "crossfill", "run"],
        log,
        env=_environment(home, chosen, settings or {}),
    )
    peer = PeerService(host=LOOPBACK, port=chosen, process=process, log_path=log, home=home)
    deadline = time.monotonic() + PEER_READY_TIMEOUT_SECONDS
    while peer.alive() and time.monotonic() < deadline:
        if _healthy(peer.base_url):
            return peer
        time.sleep(0.2)
    peer.stop()
    raise DevnetError(f"the peer service did not start; see {log}")
