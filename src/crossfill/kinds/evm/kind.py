"""The EVM kind: its chains from the deployment, and their workers (`kinds.evm.workers`)."""

from __future__ import annotations

from collections.abc import Sequence

from crossfill.kinds.evm.chain import EvmChain
from crossfill.kinds.evm.config import EVM_SECTION, evm_chains
from crossfill.kinds.evm.runtime import evm_chain_runtime
from crossfill.kinds.evm.workers import EvmWorkers
from crossfill.kinds.port import ChainContext, WorkerContext
from crossfill.runtime import Runtime


class EvmKind:
    name = "evm"
    config_section = EVM_SECTION

    def chains(self, context: ChainContext) -> Sequence[EvmChain]:
        solver = context.deployment.solver.address
        return [
            EvmChain(
                evm_chain_runtime(config, context.settings, solver, context.clock, context.metrics)
            )
            for config in evm_chains(context.deployment)
        ]

    def workers(self, runtime: Runtime, context: WorkerContext) -> EvmWorkers:
        return EvmWorkers.build(runtime, context)


EVM = EvmKind()
