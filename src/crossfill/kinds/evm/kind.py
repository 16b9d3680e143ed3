"""The EVM kind: its chains from the deployment, and their workers (`kinds.evm.workers`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from crossfill.config import Deployment
from crossfill.kinds.evm.chain import EvmChain
from crossfill.kinds.evm.runtime import evm_chain_runtime
from crossfill.kinds.evm.workers import EvmWorkers
from crossfill.kinds.port import WorkerContext
from crossfill.metrics import Metrics
from crossfill.runtime import Runtime
from crossfill.settings import Settings


class EvmKind:
    name = "evm"

    def chains(
        self,
        deployment: Deployment,
        settings: Settings,
        *,
        clock: Callable[[], float],
        metrics: Metrics,
    ) -> Sequence[EvmChain]:
        solver = deployment.solver.address
        return [
            EvmChain(evm_chain_runtime(config, settings, solver, clock, metrics))
            for config in deployment.chains
        ]

    def workers(self, runtime: Runtime, context: WorkerContext) -> EvmWorkers:
        return EvmWorkers.build(runtime, context)


EVM = EvmKind()
