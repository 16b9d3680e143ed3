"""The devnet's parts as the suites start them, each running inside a `with`: the EVM chains
with everything deployed and seeded (`running_devnet`), the SVM node, seeded
(`running_svm_node`), the perps exchange, its solver account funded (`running_exchange`); and
a deployment that serves the SVM chain or the exchange beside the EVM chains."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from crossfill.config import Deployment, load_deployment
from crossfill.devnet.exchange.deployment import perps_document, seed_exchange
from crossfill.devnet.exchange.process import ExchangeProcess, start_exchange
from crossfill.devnet.network import Devnet, DevnetOptions, start_devnet
from crossfill.devnet.svm.deployment import svm_chain_document
from crossfill.devnet.svm.process import SvmNodeOptions, SvmNodeProcess, start_svm_node
from crossfill.devnet.svm.seed import SeededSvm, seed_svm
from crossfill.kinds.perps.config import PERPS_SECTION, PerpsExchangeConfig
from crossfill.kinds.registry import SECTIONS
from crossfill.kinds.svm.config import SVM_SECTION, SvmChainConfig
from crossfill.settings import Mode


@dataclass
class RunningDevnet:
    network: Devnet
    deployment: Deployment
    deployment_path: Path


@contextmanager
def running_devnet(home: Path) -> Iterator[RunningDevnet]:
    """Two automining anvil chains with everything deployed and seeded; files in `home`."""
    path = home / "deployment.toml"
    network = start_devnet(DevnetOptions(block_time=0), deployment_path=path, log_dir=home)
    try:
        yield RunningDevnet(
            network, load_deployment(path, mode=Mode.DEVNET, sections=SECTIONS), path
        )
    finally:
        network.stop()


@contextmanager
def running_svm_node(log_dir: Path) -> Iterator[tuple[SvmNodeProcess, SeededSvm]]:
    """The devnet SVM node (a slot each 100 ms), seeded."""
    node = start_svm_node(log_dir=log_dir, options=SvmNodeOptions(slot_ms=100))
    try:
        yield node, seed_svm(node.rpc_url)
    finally:
        node.stop()


@contextmanager
def running_exchange(home: Path) -> Iterator[ExchangeProcess]:
    """The devnet perps exchange, its state in `home`, the solver's account funded."""
    process = start_exchange(state_path=home / "exchange-state.sqlite3", log_dir=home)
    try:
        seed_exchange(process.api_url)
        yield process
    finally:
        process.stop()


def with_svm_chain(deployment: Deployment, node: SvmNodeProcess, seeded: SeededSvm) -> Deployment:
    """`deployment` serving the SVM chain of `node` too."""
    document = svm_chain_document(rpc_url=node.rpc_url, ws_url=node.ws_url, seeded=seeded)
    return deployment.with_section(SVM_SECTION, (SvmChainConfig.model_validate(document),))


def exchange_config(exchange: ExchangeProcess, **changes: object) -> PerpsExchangeConfig:
    """The `[perps]` section for `exchange`, with `changes`."""
    return PerpsExchangeConfig.model_validate(
        {**perps_document(api_url=exchange.api_url), **changes}
    )


def with_exchange(deployment: Deployment, exchange: ExchangeProcess) -> Deployment:
    """`deployment` serving the perps exchange too."""
    return deployment.with_section(PERPS_SECTION, (exchange_config(exchange),))
