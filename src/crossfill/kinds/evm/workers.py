"""The EVM chains' workers: an indexer, a solver, a refunder, a repayer (unless repayment is
off), a sponsor collector, a permit depositor, an app-fee payer, a deposit-address sweeper and
a gas keeper per chain, a gasless executor per chain and sponsor, and for each signer on each
chain a watch of its mined transactions and the keeper of its signer lease. They are composed across
chains: an indexer hands a request it makes pending to its destination's solver at once."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TypeVar

import structlog
from eth_account.signers.local import LocalAccount
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app.erc7683_orders import take_orders
from crossfill.app.quotes import arrival_rows
from crossfill.config.secrets import resolve_holder
from crossfill.domain.fades import FadePenalty
from crossfill.domain.key_gas import SOLVER, sponsor_role
from crossfill.kinds.evm.app_fee_payer import AppFeePayer
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.deposit_addresses import DepositAddressSweeper
from crossfill.kinds.evm.fade_debiter import FadeDebiter
from crossfill.kinds.evm.fill_finality import FillFinality
from crossfill.kinds.evm.gas_keeper import GasKeeper, SendingKey
from crossfill.kinds.evm.gasless_executor import GaslessExecutor
from crossfill.kinds.evm.hint_watch import Hint
from crossfill.kinds.evm.indexer import Claim, Indexer
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.mined_watch import MinedWatch
from crossfill.kinds.evm.permit_depositor import PermitDepositor
from crossfill.kinds.evm.rebalancer import Rebalancer
from crossfill.kinds.evm.refunder import Refunder
from crossfill.kinds.evm.repayer import Repayer
from crossfill.kinds.evm.signer_keeper import SignerKeeper
from crossfill.kinds.evm.solver import Solver
from crossfill.kinds.evm.sponsor_collector import SponsorCollector
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.kinds.port import NamedWorker, WorkerContext
from crossfill.runtime import Runtime
from crossfill.store.db import is_sqlite
from crossfill.store.tables import Request
from crossfill.treasury.intents_api_bridge import IntentsApiBridge
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId

log = structlog.get_logger(__name__)

T = TypeVar("T")


def _hand_over(solvers: dict[ChainId, Solver], chain_id: int, request_id: str) -> None:
    solver = solvers.get(ChainId(chain_id))
    if solver is not None:
        solver.take(request_id)


async def _claim_pending(
    solvers: dict[ChainId, Solver], session: AsyncSession, request: Request
) -> Claim | None:
    solver = solvers.get(ChainId(request.destination_chain_id))
    return None if solver is None else await solver.claim_pending(session, request)


@dataclass
class EvmWorkers:
    runtime: Runtime
    indexers: dict[ChainId, Indexer]
    solvers: dict[ChainId, Solver]
    refunders: dict[ChainId, Refunder]
    repayers: dict[ChainId, Repayer]
    sponsor_collectors: dict[ChainId, SponsorCollector]
    app_fee_payers: dict[ChainId, AppFeePayer]
    permit_depositors: dict[ChainId, PermitDepositor]
    deposit_address_sweepers: dict[ChainId, DepositAddressSweeper]
    # One per chain: every sending key's gas kept above its minimum from the solver's.
    gas_keepers: dict[ChainId, GasKeeper] = field(default_factory=dict)
    gasless_executors: list[GaslessExecutor] = field(default_factory=list)
    # One per signer and chain: its mined transactions kept in the chain until final.
    mined_watches: list[MinedWatch] = field(default_factory=list)
    # One per signer and chain: its signer lease, renewed, or asked for while another holds it.
    signer_keepers: list[SignerKeeper] = field(default_factory=list)
    # One for every chain, with targets and a bridge: the solver's inventory moved between them.
    rebalancer: Rebalancer | None = None
    # One per chain with a SolverBond: faded solvers' bonds debited, by the allocator.
    fade_debiters: dict[ChainId, FadeDebiter] = field(default_factory=dict)

    @classmethod
    def build(cls, runtime: Runtime, context: WorkerContext) -> EvmWorkers:
        settings, deployment, now = runtime.settings, runtime.deployment, context.now
        allocator = resolve_holder(
            deployment.allocator,
            "allocator",
            mode=settings.mode,
            keystore_password=settings.keystore_password,
        )
        # One transaction manager per chain for the solver key: fills, refunds and app-fee
        # payouts share nonces, and one process at a time signs with it (the signer lease,
        # held as the context's owner). The followers read the key's balance: what it cannot
        # pay for is never signed.
        txmanagers = {
            chain_id: TxManager(
                chain.client,
                chain.state,
                runtime.solver_account,
                runtime.sessions,
                now=now,
                holder=context.owner,
                lease=context.signer_lease,
                funds=functools.partial(chain.state.solver_balance, NATIVE_EVM_ADDRESS),
            )
            for chain_id, chain in evm_chains(runtime).items()
        }
        interval = settings.worker_interval_seconds
        # Transactions of a burst's records at once: SQLite has one connection, for which
        # they would only queue.
        concurrent = 1 if is_sqlite(settings.database) else 4
        indexers = {
            chain_id: Indexer(
                chain,
                runtime.sessions,
                now=now,
                interval_seconds=interval,
                metrics=runtime.metrics,
                hint_calls_per_client_per_minute=settings.hint_rpc_calls_per_client_per_minute,
                concurrent_transactions=concurrent,
            )
            for chain_id, chain in evm_chains(runtime).items()
        }

        def journalled(
            worker: Callable[..., T], *signers: LocalAccount, **parts: object
        ) -> dict[ChainId, T]:
            """One per chain of a worker sending through that chain's journal."""
            return {
                chain_id: worker(
                    chain,
                    runtime.sessions,
                    txmanagers[chain_id],
                    *signers,
                    now=now,
                    interval_seconds=interval,
                    **parts,
                )
                for chain_id, chain in evm_chains(runtime).items()
            }

        solvers = journalled(
            Solver,
            owner=context.owner,
            metrics=runtime.metrics,
            concurrent_transactions=concurrent,
            fade_penalty=FadePenalty(
                deployment.rfq.fade_cooldown_seconds, deployment.rfq.max_fade_cooldown_seconds
            ),
        )
        for indexer in indexers.values():
            indexer.on_pending = lambda chain_id, request_id: _hand_over(
                solvers, chain_id, request_id
            )
            indexer.claim_pending = functools.partial(_claim_pending, solvers)
            indexer.take_orders = functools.partial(take_orders, runtime)
        sweepers = journalled(
            DepositAddressSweeper,
            reprice=functools.partial(arrival_rows, runtime),
            metrics=runtime.metrics,
        )
        gasless_executors = _gasless_executors(runtime, context)
        # The allocator sends only the debits of faded solvers' bonds, through its own journal.
        fade_debiters = {
            chain_id: FadeDebiter(
                chain,
                runtime.sessions,
                TxManager(
                    chain.client, chain.state, allocator, runtime.sessions, now=now,
                    holder=context.owner, lease=context.signer_lease,
                ),
                now=now,
                interval_seconds=interval,
                pay_to=runtime.solver_account.address,
            )
            for chain_id, chain in evm_chains(runtime).items()
            if chain.config.contracts.solver_bond is not None
        }  # fmt: skip
        mined_watches = [
            MinedWatch(
                worker.chain, worker.txmanager, interval_seconds=interval, metrics=runtime.metrics
            )
            for worker in (*solvers.values(), *gasless_executors, *fade_debiters.values())
        ]
        # A lease taken wakes the solver (fills first); the key's other workers, and the
        # sponsors', go at their next tick.
        signer_keepers = [
            *(SignerKeeper(solver.txmanager, on_taken=solver.wake) for solver in solvers.values()),
            *(SignerKeeper(executor.txmanager) for executor in gasless_executors),
            *(SignerKeeper(debiter.txmanager) for debiter in fade_debiters.values()),
        ]
        return cls(
            runtime,
            indexers,
            solvers,
            journalled(Refunder, allocator),
            # Each repayer reads every EVM chain its deposits' orders are filled on.
            journalled(
                Repayer,
                allocator,
                finality=FillFinality(runtime.kind_chains, evm_chains(runtime)),
                rules=deployment.repayment.rules,
                metrics=runtime.metrics,
                steering=deployment.rebalancing.targets if deployment.rebalancing.enabled else (),
            )
            if deployment.repayment.enabled
            else {},
            journalled(SponsorCollector),
            journalled(AppFeePayer, allocator),
            journalled(PermitDepositor),
            sweepers,
            gas_keepers=journalled(GasKeeper, keys=_sending_keys(runtime), metrics=runtime.metrics),
            gasless_executors=gasless_executors,
            mined_watches=mined_watches,
            signer_keepers=signer_keepers,
            rebalancer=_rebalancer(runtime, context, txmanagers),
            fade_debiters=fade_debiters,
        )

    def listen(self) -> list[Callable[[], None]]:
        """Each new head wakes the chain's indexer (deposits) and solver (fills mined), and
        the mined watches; the deposit-address sweeper once the indexer's scan of it is done
        (the fill path first on the database)."""
        removals = []
        for chain_id, chain in evm_chains(self.runtime).items():
            indexer = self.indexers[chain_id]
            removals.append(chain.follower.on_new_head(indexer.new_head))
            removals.append(chain.follower.on_new_head(self.solvers[chain_id].new_head))
            sweeper = self.deposit_address_sweepers.get(chain_id)
            if sweeper is not None:
                indexer.on_scanned = sweeper.new_head
        for watch in self.mined_watches:
            removals.append(watch.chain.follower.on_new_head(watch.new_head))
        return removals

    def loops(self) -> Sequence[NamedWorker]:
        journalled: list[Mapping[ChainId, JournalledWorker]] = [
            self.solvers,
            self.refunders,
            self.repayers,
            self.sponsor_collectors,
            self.app_fee_payers,
            self.permit_depositors,
            self.deposit_address_sweepers,
            self.gas_keepers,
            self.fade_debiters,
        ]
        return [
            *(NamedWorker(watch.name, watch.run) for watch in self.mined_watches),
            *(NamedWorker(keeper.name, keeper.run) for keeper in self.signer_keepers),
            *(
                NamedWorker(f"indexer-{chain_id}", indexer.run)
                for chain_id, indexer in self.indexers.items()
            ),
            *(
                NamedWorker(worker.name, worker.run)
                for workers in journalled
                for worker in workers.values()
            ),
            *(
                NamedWorker(f"deposit-address-traces-{chain_id}", sweeper.run_traces)
                for chain_id, sweeper in self.deposit_address_sweepers.items()
            ),
            *(NamedWorker(executor.name, executor.run) for executor in self.gasless_executors),
            *(() if self.rebalancer is None else (NamedWorker("rebalancer", self.rebalancer.run),)),
        ]

    def hint(self, chain_id: int, tx_hash: str, client: str) -> bool:
        indexer = self.indexers.get(ChainId(chain_id))
        return indexer is not None and indexer.hint(Hint(tx_hash, client))


def _rebalancer(
    runtime: Runtime, context: WorkerContext, txmanagers: Mapping[ChainId, TxManager]
) -> Rebalancer | None:
    """The rebalancer, when the file sets targets (and does not turn it off) and names a
    bridge; its moves sent through the solver key's transaction manager of each chain."""
    settings, solver = runtime.deployment.rebalancing, runtime.deployment.solver.address
    if not settings.runs:
        return None
    senders: dict[int, TxManager] = dict(txmanagers.items())
    bridge = IntentsApiBridge.configured(settings, senders, solver)
    if bridge is None:
        log.warning("rebalancing targets without a bridge_url: repayments steered, no moves")
        return None
    lease = max(context.signer_lease, timedelta(seconds=3 * settings.interval_seconds))
    return Rebalancer(
        evm_chains(runtime), runtime.sessions, bridge, settings, solver, context.owner, lease,
        context.now, runtime.metrics, closing=bridge.aclose,
    )  # fmt: skip


def _sending_keys(runtime: Runtime) -> tuple[SendingKey, ...]:
    """Every key the service sends from on the EVM chains: the solver's and each gasless
    sponsor's (the allocator only signs)."""
    deployment = runtime.deployment
    return (
        SendingKey(SOLVER, deployment.solver.address),
        *(
            SendingKey(sponsor_role(index), sponsor.address)
            for index, sponsor in enumerate(deployment.gasless.sponsors)
        ),
    )


def _gasless_executors(runtime: Runtime, context: WorkerContext) -> list[GaslessExecutor]:
    """One per chain and gas sponsor, each with the sponsor's own transaction manager (its
    nonces, its signer lease)."""
    settings = runtime.settings
    executors = []
    for index, holder in enumerate(runtime.deployment.gasless.sponsors):
        account = resolve_holder(
            holder,
            f"gasless.sponsors[{index}]",
            mode=settings.mode,
            keystore_password=settings.keystore_password,
        )
        for chain in evm_chains(runtime).values():
            # Its balance as its executor last read it: a call it cannot pay is not signed.
            txmanager = TxManager(
                chain.client,
                chain.state,
                account,
                runtime.sessions,
                now=context.now,
                holder=context.owner,
                lease=context.signer_lease,
                funds=functools.partial(chain.state.sponsor_balance, account.address),
            )
            executors.append(
                GaslessExecutor(
                    chain,
                    runtime.sessions,
                    txmanager,
                    now=context.now,
                    interval_seconds=settings.worker_interval_seconds,
                    role=sponsor_role(index),
                )
            )
    return executors
