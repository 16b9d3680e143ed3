"""Prometheus series: every one Crossfill exports, in a registry of its own.

A leaf module (it imports prometheus_client only), so any layer records where the fact is
known; one `Metrics` is built per process with its runtime and handed down. Labels are
bounded: chain ids and currency symbols from the deployment, route kinds, outcomes, statuses;
never request ids, addresses or URLs. The series are described in docs/metrics.md.

Several processes (API replicas beside the main process) aggregate through prometheus_client's
multiprocess mode when `PROMETHEUS_MULTIPROC_DIR` is set: every process writes its values to
files there and any process's /metrics answers for all of them (see docs/metrics.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

# Outcomes of a quote the use case handled.
QUOTED, REFUSED, UNAVAILABLE, FAILED = "ok", "refused", "unavailable", "error"
# Route kind of a quote refused before its route was known.
NO_ROUTE = "unknown"
# Outcomes of a JSON-RPC call, after `kinds.evm.client` has typed its failures.
RPC_OK = "ok"
# Outcomes of a webhook delivery attempt.
DELIVERED, NOT_DELIVERED = "delivered", "failed"

# A quote takes about 1.5 ms of CPU (docs/performance.md); the RPC read on its path more.
_QUOTE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_SERVICE_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
# Block timestamps: whole seconds, confirmations included.
_END_TO_END_BUCKETS = (1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
_WEBHOOK_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_CHAINS = ("origin_chain_id", "destination_chain_id")
# A repayment alone costs about 60k gas; batched, each deposit in it costs less.
_REPAYMENT_GAS_BUCKETS = (10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 80_000, 100_000, 150_000)


class Metrics:
    """This process's series. `multiprocess_dir`: set when processes aggregate (see above)."""

    def __init__(self, *, multiprocess_dir: Path | None = None) -> None:
        self.multiprocess_dir = multiprocess_dir
        self.registry = CollectorRegistry()
        counter = partial(Counter, registry=self.registry)
        histogram = partial(Histogram, registry=self.registry)
        # Gauges set by one process at a time (followers run in every process: the latest
        # value wins, which is what one chain poll or another says).
        latest = partial(Gauge, registry=self.registry, multiprocess_mode="mostrecent")
        self.quote_duration = histogram(
            "crossfill_quote_duration_seconds",
            "Time to answer a quote, by route kind and outcome (ok, refused, unavailable, error)",
            ["route_kind", "outcome"],
            buckets=_QUOTE_BUCKETS,
        )
        self.rfq_bids = counter(
            "crossfill_rfq_bids",
            "External solvers asked for a bid at quote time, by what became of it (won, lost, "
            "declined, late, or the reason it was refused)",
            ["outcome"],
        )
        self.http_responses = counter(
            "crossfill_http_responses",
            "HTTP answers of the API by route (its path template; 'unmatched' when no route "
            "took the request) and status code",
            ["route", "code"],
        )
        self.fill_service = histogram(
            "crossfill_fill_service_seconds",
            "The service's share of a fill: deposit accepted by the indexer to fill broadcast",
            _CHAINS,
            buckets=_SERVICE_BUCKETS,
        )
        self.fill_end_to_end = histogram(
            "crossfill_fill_end_to_end_seconds",
            "Deposit block to fill block (block timestamps), for successful fills",
            _CHAINS,
            buckets=_END_TO_END_BUCKETS,
        )
        self.rpc_calls = counter(
            "crossfill_rpc_calls",
            "JSON-RPC calls (single or batched) by chain, call and outcome",
            ["chain_id", "call", "outcome"],
        )
        self.rpc_batches_refused = counter(
            "crossfill_rpc_batches_refused",
            "JSON-RPC batches an endpoint refused as a whole (its calls then go one by one)",
            ["chain_id"],
        )
        self.reorged_transactions = counter(
            "crossfill_reorged_transactions",
            "Mined transactions of ours a reorg took out of their block, by what became of them",
            ["chain_id", "outcome"],
        )
        self.webhook_delivery = histogram(
            "crossfill_webhook_delivery_duration_seconds",
            "Webhook delivery attempts, request sent to answer (or failure), by outcome",
            ["outcome"],
            buckets=_WEBHOOK_BUCKETS,
        )
        self.webhook_failures = counter(
            "crossfill_webhook_delivery_failures",
            "Failed webhook delivery attempts by reason",
            ["reason"],
        )
        self.traces_passed_over = counter(
            "crossfill_traces_passed_over",
            "Transactions whose traces the node could not give, passed over by the read of "
            "contracts' payments to deposit addresses (a payment in one is left to recovery)",
            ["chain_id"],
        )
        self.deposit_address_dust = counter(
            "crossfill_deposit_address_dust",
            "Transfers to deposit addresses worth no more than the gas of their own sweep: "
            "recorded as failed child requests too small to refund, left at the address",
            ["chain_id"],
        )
        self.webhook_abandoned = counter(
            "crossfill_webhook_deliveries_abandoned",
            "Webhook events given up on after their last retry (replayable by an operator)",
        )
        self.solver_balance = latest(
            "crossfill_solver_balance",
            "The solver's balance per chain and currency, in whole units (decimals applied)",
            ["chain_id", "currency"],
        )
        self.solver_inventory = latest(
            "crossfill_solver_inventory",
            "The solver's inventory per chain and currency, in whole units: `part` is balance "
            "(on chain), committed (outputs of orders in flight), free (balance less "
            "committed, negative when oversubscribed), owed (deposits owed to it, unpaid), "
            "in_transit (the rebalancer's moves toward the chain, not yet arrived) or virtual "
            "(free + in_transit + owed)",
            ["chain_id", "currency", "part"],
        )
        self.solver_shortfall = latest(
            "crossfill_solver_shortfall",
            "What the solver's balance lacks, per chain and currency in whole units, for the "
            "fills waiting on it (output and gas; 0 when nothing waits)",
            ["chain_id", "currency"],
        )
        self.key_gas_balance = latest(
            "crossfill_key_gas_balance",
            "Each sending key's gas-currency balance per chain, in whole units, as the chain's "
            "gas keeper last read it (key: solver, gasless-sponsor-N)",
            ["chain_id", "key"],
        )
        self.key_gas_minimum = latest(
            "crossfill_key_gas_minimum",
            "Each sending key's minimum gas-currency balance per chain, in whole units",
            ["chain_id", "key"],
        )
        self.key_gas_low = latest(
            "crossfill_key_gas_low",
            "1 while a sending key is below its minimum gas balance and cannot be topped up "
            "(the solver's own key, or the solver cannot spare it); else 0",
            ["chain_id", "key"],
        )
        self.gas_top_ups = counter(
            "crossfill_gas_top_ups",
            "Top-ups of a sending key's gas from the solver's inventory, sent (journalled)",
            ["chain_id", "key"],
        )
        self.gas_top_up_wei = counter(
            "crossfill_gas_top_up_wei",
            "Wei sent from the solver to a sending key as gas top-ups",
            ["chain_id", "key"],
        )
        self.repayments = counter(
            "crossfill_repayments",
            "Deposits owed to the solver, by what became of their repayment out of the "
            "Depository (repaid; refunded or paid_elsewhere: another payout under the "
            "deposit's nonce came first; refused by the Depository)",
            ["chain_id", "outcome"],
        )
        self.repayment_gas_per_order = histogram(
            "crossfill_repayment_gas_per_order",
            "Gas per repaid deposit: its repayment transaction's gas shared evenly by the "
            "deposits it repaid",
            ["chain_id"],
            buckets=_REPAYMENT_GAS_BUCKETS,
        )
        # The books (docs/treasury.md#books), per chain and currency, in whole units.
        self.books_owed_to_users = latest(
            "crossfill_books_owed_to_users",
            "Escrow the Depository holds for users: deposits not yet filled or refunded",
            ["chain_id", "currency"],
        )
        self.books_owed_to_solver = latest(
            "crossfill_books_owed_to_solver",
            "Deposits of filled orders the Depository owes the solver, not yet repaid",
            ["chain_id", "currency"],
        )
        self.books_app_fees_owed = latest(
            "crossfill_books_app_fees_owed",
            "App fees the Depository holds for their recipients, not yet claimed",
            ["chain_id", "currency"],
        )
        self.books_fees_earned = latest(
            "crossfill_books_fees_earned",
            "Repaid to the solver, refund gas kept and sponsorship received, less what the "
            "solver's fills paid out, on this chain (a currency's sum over chains is its earnings)",
            ["chain_id", "currency"],
        )
        self.books_gas_spent = latest(
            "crossfill_books_gas_spent",
            "Gas the service's keys paid for their mined transactions on this chain",
            ["chain_id", "currency"],
        )
        self.books_in_transit = latest(
            "crossfill_books_in_transit",
            "What the rebalancer's moves sent from this chain through a bridge and that has "
            "not arrived yet, in the origin's currency",
            ["chain_id", "currency"],
        )
        # The rebalancer (docs/treasury.md#moving-inventory-between-chains).
        self.rebalance_moves = counter(
            "crossfill_rebalance_moves",
            "Moves of the solver's inventory between chains through the bridge, by the "
            "currency's symbol and what became of them (sent, arrived, refunded, failed)",
            [*_CHAINS, "currency", "outcome"],
        )
        self.rebalance_unavailable = latest(
            "crossfill_rebalance_unavailable",
            "1 while the bridge or a chain does not answer for a move (quote, send or status), "
            "which is tried again with backoff; 0 once they answer",
            [*_CHAINS, "currency"],
        )
        self.rebalance_trouble = latest(
            "crossfill_rebalance_trouble",
            "1 while a (chain, currency) with levels cannot be refilled: below its minimum with "
            "its move refused or no surplus anywhere, or a move toward it unanswered or under "
            "way beyond rebalancing.stalled_after_seconds (/readyz checks.rebalancing says "
            "which); 0 otherwise",
            ["chain_id", "currency"],
        )
        self.books_unexplained = latest(
            "crossfill_books_unexplained",
            "An account's balance on chain less its books and every named cause (account: "
            "depository, solver (its key, the SVM vault, its exchange account), other_keys; "
            "nonzero: an alert), signed, in whole units",
            ["chain_id", "account", "currency"],
        )
        self.indexer_lag = latest(
            "crossfill_indexer_lag_blocks",
            "Blocks between the chain's head and the indexer's cursor",
            ["chain_id"],
        )

    def key_gas(
        self, chain_id: int, key: str, *, balance: float, minimum: float, low: bool
    ) -> None:
        """A sending key's gas balance and minimum (whole units), and whether it is low."""
        labels = (str(chain_id), key)
        self.key_gas_balance.labels(*labels).set(balance)
        self.key_gas_minimum.labels(*labels).set(minimum)
        self.key_gas_low.labels(*labels).set(int(low))

    def exposition(
        self,
        requests_by_status: Mapping[str, int] | None,
        kept_deposits: Mapping[tuple[int, str], int] | None = None,
    ) -> bytes:
        """The text exposition of every series, with the store's request counts and kept
        deposits when known."""
        if self.multiprocess_dir is None:
            own = generate_latest(self.registry)
        else:
            everyone = CollectorRegistry()
            MultiProcessCollector(everyone, path=str(self.multiprocess_dir))  # type: ignore[no-untyped-call]
            own = generate_latest(everyone)
        if requests_by_status is not None:
            own += generate_latest(RequestsByStatus(requests_by_status))
        if kept_deposits is not None:
            own += generate_latest(KeptDeposits(kept_deposits))
        return own


class RequestsByStatus:
    """`crossfill_requests{status}`: how many requests the store holds in each status, read at
    scrape time (a collector, so it is never stale and every process answers the same)."""

    def __init__(self, counts: Mapping[str, int]) -> None:
        self.counts = counts

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(
            "crossfill_requests", "Requests in the store by status", labels=["status"]
        )
        for status, count in sorted(self.counts.items()):
            family.add_metric([status], count)
        yield family


class KeptDeposits:
    """`crossfill_deposits_kept{chain_id, reason}`: deposits the store keeps unrefunded (too
    small to pay their own refund, ...), read at scrape time like `crossfill_requests`."""

    def __init__(self, counts: Mapping[tuple[int, str], int]) -> None:
        self.counts = counts

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(
            "crossfill_deposits_kept",
            "Deposits kept unrefunded, by chain and reason",
            labels=["chain_id", "reason"],
        )
        for (chain_id, reason), count in sorted(self.counts.items()):
            family.add_metric([str(chain_id), reason], count)
        yield family


def clear_multiprocess_dir(path: Path) -> None:
    """Forget the values of earlier runs: the main process calls this before any process of
    this run writes there."""
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink()
