"""Start a devnet of N anvil chains with everything deployed, seeded and described on disk."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crossfill.devnet import accounts
from crossfill.devnet.anvil import AnvilProcess, set_interval_mining, start_anvil
from crossfill.devnet.child_process import LOOPBACK
from crossfill.devnet.deploy import DeployedContracts, deploy_all, signing_web3
from crossfill.devnet.deployment_file import chain_document, deployment_document, write_deployment
from crossfill.devnet.exchange.deployment import perps_document, seed_exchange
from crossfill.devnet.exchange.process import ExchangeProcess, start_exchange
from crossfill.devnet.peer import PeerChain, deploy_peer, peer_home, write_peer_deployment
from crossfill.devnet.seed import seed_chain
from crossfill.devnet.svm.deployment import svm_chain_document
from crossfill.devnet.svm.process import SvmNodeProcess, start_svm_node
from crossfill.devnet.svm.seed import seed_svm
from crossfill.types import Address

FIRST_CHAIN_ID = 900_001  # ids viem does not know, so the SDK takes our RPC URLs


@dataclass(frozen=True)
class DevnetOptions:
    chain_count: int = 2
    # Seconds; 0: automine (a block per transaction). A block time with a fraction (0.25) is
    # set from anvil's start, so deployment then waits for blocks (whole seconds: set after).
    block_time: float = 1
    hardfork: str = "prague"
    lag_threshold_seconds: float | None = None  # default: 10 block times, at least 5 s
    first_chain_id: int = FIRST_CHAIN_ID
    # Also start the devnet SVM chain (crossfill.devnet.svm) and describe it in the file.
    svm: bool = False
    # Also start the devnet perps exchange (crossfill.devnet.exchange), its state kept in
    # `exchange-state.sqlite3` beside the deployment file, and describe it as `[perps]`.
    exchange: bool = False
    # Also deploy the peer deployment (crossfill.devnet.peer) on every chain and write its
    # deployment file, `peer/deployment.toml` beside the main one.
    peer: bool = False
    # The port the peer's API will listen on: the main deployment's bridge then
    # (`[rebalancing] bridge_url`).
    peer_port: int | None = None

    @property
    def fractional_block_time(self) -> float | None:
        """The block time anvil must start with (one with a fraction of a second), else None."""
        return None if self.block_time == int(self.block_time) else self.block_time

    @property
    def effective_lag_threshold(self) -> float | None:
        if self.block_time == 0:
            return None
        if self.lag_threshold_seconds is not None:
            return self.lag_threshold_seconds
        return max(5.0, 10 * self.block_time)


@dataclass
class DevnetChain:
    anvil: AnvilProcess
    contracts: DeployedContracts
    # The peer deployment's contracts on this chain, when it has one.
    peer_contracts: DeployedContracts | None = None

    def peer_chain(self) -> PeerChain | None:
        if self.peer_contracts is None:
            return None
        anvil = self.anvil
        return PeerChain(anvil.chain_id, anvil.rpc_url, anvil.ws_url, self.peer_contracts)


@dataclass
class Devnet:
    chains: list[DevnetChain] = field(default_factory=list)
    svm_node: SvmNodeProcess | None = None
    exchange: ExchangeProcess | None = None

    def stop(self) -> None:
        for chain in self.chains:
            chain.anvil.stop()
        if self.svm_node is not None:
            self.svm_node.stop()
        if self.exchange is not None:
            self.exchange.stop()


def _deploy_and_seed(anvil: AnvilProcess, options: DevnetOptions) -> DevnetChain:
    try:
        deployer = accounts.deployer()
        web3 = signing_web3(anvil.rpc_url, deployer)
        contracts = deploy_all(
            web3,
            owner=Address(deployer.address),
            solver=Address(accounts.solver().address),
            allocator=Address(accounts.allocator().address),
        )
        seed_chain(
            anvil.rpc_url,
            contracts,
            deployer=deployer,
            solver=accounts.solver(),
            users=accounts.users(),
            gas_sponsor=accounts.gas_sponsor(),
        )
        # Before interval mining starts: on automine, deployment takes no block times.
        peer = deploy_peer(anvil.rpc_url, contracts) if options.peer else None
        if options.fractional_block_time is None:
            # Deployment ran on automine for speed; now blocks come on the configured clock.
            set_interval_mining(anvil.rpc_url, int(options.block_time))
    except BaseException:
        anvil.stop()
        raise
    return DevnetChain(anvil=anvil, contracts=contracts, peer_contracts=peer)


def start_devnet(
    options: DevnetOptions,
    *,
    deployment_path: Path,
    log_dir: Path,
    progress: Callable[[str], None] = lambda _message: None,
) -> Devnet:
    """Start, deploy and seed every chain (in parallel), then write the deployment file."""
    devnet = Devnet()
    # Started on this thread: anvil's parent-death signal fires when the spawning *thread*
    # exits, so spawning from pool threads would kill the chains as soon as deployment ends.
    anvils: list[AnvilProcess] = []
    try:
        for offset in range(options.chain_count):
            chain_id = options.first_chain_id + offset
            anvils.append(
                start_anvil(
                    chain_id,
                    log_dir=log_dir,
                    hardfork=options.hardfork,
                    block_time=options.fractional_block_time,
                )
            )
    except BaseException:
        for anvil in anvils:
            anvil.stop()
        raise
    with ThreadPoolExecutor(max_workers=options.chain_count) as pool:
        futures = [pool.submit(_deploy_and_seed, anvil, options) for anvil in anvils]
        failure: BaseException | None = None
        for future in futures:
            try:
                devnet.chains.append(future.result())
                progress(f"chain {devnet.chains[-1].anvil.chain_id} deployed and seeded")
            except BaseException as exc:  # keep collecting so every started chain is stopped
                failure = failure or exc
    if failure is not None:
        devnet.stop()
        raise failure
    documents = [
        chain_document(
            chain_id=chain.anvil.chain_id,
            index=index,
            rpc_url=chain.anvil.rpc_url,
            ws_url=chain.anvil.ws_url,
            contracts=chain.contracts,
            lag_threshold_seconds=options.effective_lag_threshold,
        )
        for index, chain in enumerate(devnet.chains, start=1)
    ]
    document = deployment_document(documents)
    if options.svm:
        document["svm_chains"] = [_start_svm(devnet, log_dir, progress)]
    if options.exchange:
        document["perps"] = _start_exchange(devnet, deployment_path.parent, log_dir, progress)
    if options.peer:
        _describe_peer(devnet, options, document, deployment_path.parent)
    write_deployment(deployment_path, document)
    return devnet


def _describe_peer(
    devnet: Devnet, options: DevnetOptions, document: dict[str, Any], home: Path
) -> None:
    """The peer's deployment file in `home`'s `peer/`; the main deployment's bridge is the
    peer's API (`[rebalancing] bridge_url`) once its port is known."""
    write_peer_deployment(
        peer_home(home) / "deployment.toml",
        [chain for chain in map(DevnetChain.peer_chain, devnet.chains) if chain is not None],
        lag_threshold_seconds=options.effective_lag_threshold,
    )
    if options.peer_port is not None:
        document["rebalancing"] = {"bridge_url": f"http://{LOOPBACK}:{options.peer_port}"}


def _start_svm(devnet: Devnet, log_dir: Path, progress: Callable[[str], None]) -> dict[str, Any]:
    try:
        devnet.svm_node = start_svm_node(log_dir=log_dir)
        seeded = seed_svm(devnet.svm_node.rpc_url)
    except BaseException:
        devnet.stop()
        raise
    progress("SVM chain started and seeded")
    return svm_chain_document(
        rpc_url=devnet.svm_node.rpc_url, ws_url=devnet.svm_node.ws_url, seeded=seeded
    )


def _start_exchange(
    devnet: Devnet, data_dir: Path, log_dir: Path, progress: Callable[[str], None]
) -> dict[str, Any]:
    try:
        devnet.exchange = start_exchange(
            state_path=data_dir / "exchange-state.sqlite3", log_dir=log_dir
        )
        seed_exchange(devnet.exchange.api_url)
    except BaseException:
        devnet.stop()
        raise
    progress("perps exchange started and seeded")
    return perps_document(api_url=devnet.exchange.api_url)
