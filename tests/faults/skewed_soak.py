"""The skewed soak: one-sided flow through `crossfill run` on three chains, the service killed
now and then, the treasury keeping the chain everyone bridges to supplied.

    python -m tests.faults.skewed_soak --database sqlite|postgres [--intents 1000]
        [--no-rebalancing]

A devnet of three EVM chains (1 s blocks) and the peer deployment (`crossfill.devnet.peer`),
the main deployment's bridge (`[rebalancing] bridge_url`). Intents alternate native ETH and
USDC; four in five go to one chain (the hot chain, 900002), the rest to the other two, from
any other chain; concurrent users, paced to `--rate` intents a second; the service is
SIGKILLed every `--seconds-between-kills` and started again at once.

Before the service first starts (before its books open), the main solver's inventory is sized
down (ETH set by the node, the USDC surplus sent to an address nobody uses): on the hot chain
to a fifth of the run's demand there, so that without rebalancing it runs dry before a third
of the run; on the others enough for their own demand and to feed the hot chain. Each
(chain, currency) has a minimum, target and maximum (in the deployment file's
`[[rebalancing.targets]]` when the build has a rebalancer; `--no-rebalancing` leaves the
bridge and targets out).

While it runs, the solver's inventory is read every second (`crossfill_solver_inventory`) and
the books (`GET /admin/books`) at a dozen checkpoints and at the end. It reports intents sent,
filled and refunded (by reason), quotes refused (by errorCode), inventory refusals and refunds
and where in the run the first came, each (chain, currency)'s dips below its minimum and how
long until it was back above, the books' unexplained difference per (chain, currency) at each
checkpoint, the money invariant (`tests.money_invariant`), double fills, and the wall time;
prints it and writes it as JSON (`--json`). Exits 1 if the books, the money invariant or a
fill broke, or (with rebalancing) if inventory was refused or refunded.
"""

from __future__ import annotations

import argparse
import itertools
import json
import queue
import sys
import tempfile
import threading
import time
import tomllib
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import tomli_w
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from web3 import Web3

from crossfill.config import load_deployment
from crossfill.config.deployment import RebalancingSettings
from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.child_process import free_port
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.devnet.network import DevnetOptions, start_devnet
from crossfill.devnet.peer import PeerService, peer_home, start_peer_service
from crossfill.kinds.registry import SECTIONS
from crossfill.settings import Mode
from crossfill.store.tables import Request
from tests.faults.treasury_watch import Dips, TreasuryWatch, dips_below
from tests.money_invariant import account_for_money, wait_until_accounted
from tests.support.database import rows_in
from tests.support.service import ServiceProcess, service_settings, settings_environment
from tests.support.soaks import create_api_key, hint, soak_database
from tests.support.wallets.evm import sign_item, wallet_fees

NATIVE = "0x" + "00" * 20
OPERATOR = "skewed-soak-operator-token"
HOT_CHAIN = 900002
# Of every five intents, four go to the hot chain.
HOT_OF_FIVE = 4
INVENTORY_CODES = frozenset({"INSUFFICIENT_LIQUIDITY", "SOLVER_CAPACITY_EXCEEDED"})
CHECKPOINTS = 12
# Repayment tuned for the soak: small batches, soon.
REPAYMENT_MAX_AGE_SECONDS = 5
REPAYMENT = {
    "batch_size": 5,
    "max_age_seconds": REPAYMENT_MAX_AGE_SECONDS,
    "min_batch_value_usd": "50",
}
# How long a deposit the inventory cannot cover waits for repayments or a rebalance.
INVENTORY_WAIT_SECONDS = 30
REBALANCE_INTERVAL_SECONDS = 2
START_TIMEOUT_SECONDS = 180


@dataclass(frozen=True)
class Currency:
    symbol: str
    decimals: int
    order: int  # each intent's input, in the smallest unit

    def whole(self, amount: int) -> Decimal:
        return Decimal(amount).scaleb(-self.decimals)

    def text(self, amount: int) -> str:
        """`amount` in whole units, as the deployment file writes them ("0.25", "2400")."""
        return format(self.whole(amount).normalize(), "f")


ETH = Currency("ETH", 18, 10**18 // 20)  # 0.05 ETH
USDC = Currency("USDC", 6, 100 * 10**6)  # 100 USDC
CURRENCIES = (ETH, USDC)


@dataclass(frozen=True)
class Limits:
    """A (chain, currency)'s inventory: what the solver starts with, and its rebalancing
    minimum, target and maximum, in the smallest unit."""

    start: int
    minimum: int
    target: int
    maximum: int


def sized(intents: int, currency: Currency, hot: bool) -> Limits:
    """The hot chain starts with a fifth of its demand over the run (the first third asks for
    a third), minimum a tenth, target three tenths; each other chain starts with its own
    demand and half the hot chain's, minimum a tenth of the hot chain's demand."""
    hot_demand = intents * HOT_OF_FIVE // 5 // len(CURRENCIES) * currency.order
    if hot:
        return Limits(hot_demand // 5, hot_demand // 10, hot_demand * 3 // 10, hot_demand * 3 // 5)
    return Limits(hot_demand, hot_demand // 10, hot_demand // 2, hot_demand * 2)


@dataclass(frozen=True)
class Plan:
    index: int
    origin: int
    destination: int
    currency: Currency


def plans(chain_ids: list[int], intents: int) -> list[Plan]:
    """Alternating ETH and USDC; four in five to the hot chain, the fifth to another chain in
    turn; the origin any chain but the destination, in turn."""
    cold = [chain for chain in chain_ids if chain != HOT_CHAIN]
    found = []
    for index in range(intents):
        destination = HOT_CHAIN if index % 5 else cold[(index // 5) % len(cold)]
        origins = [chain for chain in chain_ids if chain != destination]
        origin = origins[(index // 2) % len(origins)]
        found.append(Plan(index, origin, destination, CURRENCIES[index % len(CURRENCIES)]))
    return found


@dataclass
class Chain:
    id: int
    rpc_url: str
    usdc: str
    depository: str


@dataclass
class Outcome:
    plan: Plan
    request_id: str | None = None
    order_id: str | None = None
    refused: str | None = None  # the quote's errorCode
    message: str = ""  # and its message
    at: float = 0.0  # seconds into the run the quote was answered


class UsdcHolders:
    """Users holding USDC on each chain, approved to its Depository; one user sends one
    deposit at a time (its nonces its own)."""

    def __init__(self, chains: dict[int, Chain], count: int, each: int) -> None:
        self.free: dict[int, queue.Queue[LocalAccount]] = {}
        with ThreadPoolExecutor(len(chains)) as pool:
            for chain, holders in zip(
                chains, pool.map(lambda c: self._fund(c, count, each), chains.values()), strict=True
            ):
                self.free[chain] = queue.Queue()
                for holder in holders:
                    self.free[chain].put(holder)

    @staticmethod
    def _fund(chain: Chain, count: int, each: int) -> list[LocalAccount]:
        holders: list[LocalAccount] = [Account.create() for _ in range(count)]
        minter = signing_web3(chain.rpc_url, accounts.deployer())
        token = contract_at(minter, "TestUSDC", chain.usdc)
        for holder in holders:
            set_native_balance(chain.rpc_url, holder.address, 10 * 10**18)
            send(minter, token.functions.mint(holder.address, each))

        def approve(holder: LocalAccount) -> None:
            web3 = signing_web3(chain.rpc_url, holder)
            usdc = contract_at(web3, "TestUSDC", chain.usdc)
            send(web3, usdc.functions.approve(chain.depository, 2**256 - 1))

        with ThreadPoolExecutor(count) as pool:
            list(pool.map(approve, holders))
        return holders

    @contextmanager
    def holder(self, chain_id: int) -> Iterator[LocalAccount]:
        user = self.free[chain_id].get()
        try:
            yield user
        finally:
            self.free[chain_id].put(user)


@dataclass
class Killer:
    """SIGKILLs the service every `seconds` (`kills` times at most), starting it again at once."""

    service: ServiceProcess
    kills_wanted: int
    seconds: float
    # Held while the service must not be killed (the books being read).
    lock: threading.Lock
    kills: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while self.kills < self.kills_wanted and not self.stop.wait(self.seconds):
            with self.lock:
                self.service.kill()
                self.service.start()
            self.kills += 1


@dataclass
class Soak:
    service: ServiceProcess
    key: str
    chains: dict[int, Chain]
    holders: UsdcHolders
    rate: float
    started: float = field(default_factory=time.monotonic)
    # The same instant by the wall clock (UTC), to place what the database timestamps.
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    sent: int = 0
    # Once every intent was sent: how long that took, and how often the service was killed.
    sending_seconds: float = 0.0
    kills: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def quote(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, tuple[str, str]]:
        """The quote, or the errorCode and message it was refused with (5xx and failed
        connections, as while the service restarts, are asked again)."""
        with httpx.Client(timeout=15, headers={"x-api-key": self.key}) as http:
            for _ in range(300):
                try:
                    answer = http.post(f"{self.service.base_url}/quote/v2", json=body)
                except httpx.HTTPError:
                    time.sleep(0.3)
                    continue
                if answer.status_code == 200:
                    return answer.json(), ("", "")
                if 400 <= answer.status_code < 500 and answer.status_code != 429:
                    refusal = answer.json()
                    return None, (str(refusal.get("errorCode")), str(refusal.get("message")))
                time.sleep(0.3)
        raise RuntimeError(f"no quote for {body}")

    def one(self, plan: Plan) -> Outcome:
        time.sleep(max(0.0, self.started + plan.index / self.rate - time.monotonic()))
        try:
            if plan.currency is ETH:
                user: LocalAccount = Account.create()
                set_native_balance(self.chains[plan.origin].rpc_url, user.address, 10**18)
                return self._intent(plan, user)
            with self.holders.holder(plan.origin) as holder:
                return self._intent(plan, holder)
        finally:
            with self.lock:
                self.sent += 1

    def _intent(self, plan: Plan, user: LocalAccount) -> Outcome:
        origin, destination = self.chains[plan.origin], self.chains[plan.destination]
        native = plan.currency is ETH
        body = {
            "user": user.address,
            "recipient": Account.create().address,
            "refundTo": user.address,
            "originChainId": origin.id,
            "destinationChainId": destination.id,
            "originCurrency": NATIVE if native else origin.usdc,
            "destinationCurrency": NATIVE if native else destination.usdc,
            "amount": str(plan.currency.order),
            "tradeType": "EXACT_INPUT",
        }
        quote, (code, message) = self.quote(body)
        if quote is None:
            at = time.monotonic() - self.started
            return Outcome(plan, refused=code, message=message, at=at)
        web3 = Web3(Web3.HTTPProvider(origin.rpc_url))
        nonce = int(web3.eth.get_transaction_count(user.address, "pending"))
        fees = wallet_fees(web3)
        tx_hash = ""
        for step in quote["steps"]:
            for item in step["items"]:
                data = item["data"]
                gas = int(data["gas"]) if "gas" in data else 200_000
                signed = sign_item(user, data, nonce=nonce, fees=fees, gas=gas)
                tx_hash = web3.eth.send_raw_transaction(signed.raw_transaction).to_0x_hex()
                nonce += 1
        hint(self.service, origin.id, tx_hash)
        return Outcome(plan, quote["steps"][0]["requestId"], quote["protocol"]["v2"]["orderId"])


def _size_inventories(chains: dict[int, Chain], limits: dict[tuple[int, str], Limits]) -> None:
    """The main solver's inventory brought down to each (chain, currency)'s start: the USDC
    surplus sent to an address nobody uses, then the ETH balance set by the node."""
    solver = accounts.solver()
    cold = Account.create().address
    for chain in chains.values():
        web3 = signing_web3(chain.rpc_url, solver)
        token = contract_at(web3, "TestUSDC", chain.usdc)
        held = int(token.functions.balanceOf(solver.address).call())
        send(web3, token.functions.transfer(cold, held - limits[chain.id, "USDC"].start))
        set_native_balance(chain.rpc_url, solver.address, limits[chain.id, "ETH"].start)


def _rebalancer_built() -> bool:
    """Whether this build reads rebalancing targets from the deployment file."""
    return "targets" in RebalancingSettings.model_fields


def _soak_deployment(
    path: Path, limits: dict[tuple[int, str], Limits], chains: dict[int, Chain], rebalancing: bool
) -> Path:
    """The devnet's deployment file with repayment tuned for the soak, a short inventory
    wait, and (rebalancing) the peer as the bridge and every (chain, currency)'s targets."""
    document = tomllib.loads(path.read_text())
    document["repayment"] = REPAYMENT
    for chain in document["chains"]:
        chain["inventory_wait_seconds"] = INVENTORY_WAIT_SECONDS
    if not rebalancing:
        document.pop("rebalancing", None)
    elif _rebalancer_built():
        document["rebalancing"]["interval_seconds"] = REBALANCE_INTERVAL_SECONDS
        document["rebalancing"]["targets"] = [
            {
                "chain_id": chain,
                "currency": NATIVE if symbol == "ETH" else chains[chain].usdc,
                "minimum": currency.text(held.minimum),
                "target": currency.text(held.target),
                "maximum": currency.text(held.maximum),
            }
            for (chain, symbol), held in sorted(limits.items())
            for currency in CURRENCIES
            if currency.symbol == symbol
        ]
    soaked = path.with_name("skewed.toml")
    soaked.write_text(tomli_w.dumps(document))
    return soaked


def _peer(home: Path, port: int) -> PeerService:
    """The peer deployment's service, polling as fast as the main one, no rate limits."""
    peer = peer_home(home)
    settings = service_settings(
        peer,
        peer / "deployment.toml",
        rate_limit_anonymous_per_minute=0,
        rate_limit_key_per_minute=0,
    )
    return start_peer_service(peer, port=port, settings=settings_environment(settings))


def _settled(database: str, outcomes: list[Outcome], seconds: float) -> dict[str, Request]:
    """Every sent request's row once each is `success` or `refund` (or `seconds` passed)."""
    wanted = {outcome.request_id for outcome in outcomes if outcome.request_id}
    deadline = time.monotonic() + seconds
    while True:
        rows = {row.id: row for row in rows_in(database, select(Request)) if row.id in wanted}
        done = all(row.status in {"success", "refund"} for row in rows.values())
        if (done and len(rows) == len(wanted)) or time.monotonic() > deadline:
            return rows
        time.sleep(2)


def _double_fills(chains: dict[int, Chain], deployment: Path) -> tuple[int, int]:
    """Orders filled on chain by the main deployment's Fillers, and those filled more than
    once."""
    document = tomllib.loads(deployment.read_text())
    fills: Counter[str] = Counter()
    for chain in document["chains"]:
        web3 = Web3(Web3.HTTPProvider(chain["http_rpc_url"]))
        filler = contract_at(web3, "Filler", chain["contracts"]["filler"])
        fills.update(
            "0x" + event.args["orderId"].hex()
            for event in filler.events.OrderFilled().get_logs(from_block=0)
        )
    return len(fills), sum(1 for count in fills.values() if count > 1)


@dataclass
class Report:
    document: dict[str, Any]
    failed: list[str]


def _report(
    arguments: argparse.Namespace,
    outcomes: list[Outcome],
    rows: dict[str, Request],
    watch: TreasuryWatch,
    limits: dict[tuple[int, str], Limits],
    money: Any,
    fills: tuple[int, int],
    soak: Soak,
    seconds: float,
) -> Report:
    refused = Counter(outcome.refused for outcome in outcomes if outcome.refused)
    statuses = Counter(row.status for row in rows.values())
    refund_reasons = Counter(
        str(row.fail_reason) for row in rows.values() if row.status == "refund"
    )
    inventory_problems = sorted(
        outcome.plan.index
        for outcome in outcomes
        if outcome.refused in INVENTORY_CODES
        or (outcome.request_id in rows and rows[outcome.request_id].fail_reason in INVENTORY_CODES)
    )
    dips: dict[str, Dips] = {}
    for (chain, symbol), held in sorted(limits.items()):
        currency = ETH if symbol == "ETH" else USDC
        dips[f"{chain}:{symbol}"] = dips_below(
            watch.samples, (chain, symbol), currency.whole(held.minimum)
        )
    # Per checkpoint, the (chain, currency) places with anything unexplained, and how much.
    books_unexplained = [
        {f"{chain}:{symbol}": amount for (chain, symbol), amount in c.unexplained.items() if amount}
        for c in watch.checkpoints
    ]
    document: dict[str, Any] = {
        "database": arguments.database,
        "rebalancing": arguments.rebalancing,
        "rebalancerInBuild": _rebalancer_built(),
        "intents": len(outcomes),
        "toHotChain": sum(1 for outcome in outcomes if outcome.plan.destination == HOT_CHAIN),
        "sigkills": soak.kills,
        "sendingSeconds": round(soak.sending_seconds),
        "sent": sum(1 for outcome in outcomes if outcome.request_id),
        "statuses": dict(statuses),
        "refundsByReason": dict(refund_reasons),
        "refusedAtQuote": dict(refused),
        "inventoryRefusalsAndRefunds": len(inventory_problems),
        "firstRefusalsAtQuote": [
            {
                "intent": outcome.plan.index,
                "atSeconds": round(outcome.at, 1),
                "to": f"{outcome.plan.destination}:{outcome.plan.currency.symbol}",
                "errorCode": outcome.refused,
                "message": outcome.message,
            }
            for outcome in outcomes
            if outcome.refused
        ][:5],
        "firstInventoryProblem": _first_inventory_problem(outcomes, rows, soak),
        "startingInventory": {
            f"{chain}:{symbol}": {
                "start": currency.text(held.start),
                "minimum": currency.text(held.minimum),
                "target": currency.text(held.target),
                "maximum": currency.text(held.maximum),
            }
            for (chain, symbol), held in sorted(limits.items())
            for currency in CURRENCIES
            if currency.symbol == symbol
        },
        "dipsBelowMinimum": {holding: found.document() for holding, found in dips.items()},
        # How closely the dips were watched: a sample the service did not answer is skipped.
        "inventorySamples": len(watch.samples),
        "longestSampleGapSeconds": round(
            max((b.at - a.at for a, b in itertools.pairwise(watch.samples)), default=0.0), 1
        ),
        "checkpoints": [checkpoint.document() for checkpoint in watch.checkpoints],
        "booksUnexplainedPerCheckpoint": books_unexplained,
        "moneyInvariant": money.summary(),
        "unaccounted": len(money.unaccounted),
        "unsettled": len(money.unsettled),
        "ordersFilledOnChain": fills[0],
        "doubleFills": fills[1],
        "wallSeconds": round(seconds),
    }
    failed = []
    if any(books_unexplained) or len(watch.checkpoints) < CHECKPOINTS // 2:
        failed.append("books unexplained (or too few checkpoints)")
    if money.unaccounted or money.unsettled:
        failed.append("money invariant")
    if fills[1]:
        failed.append("double fills")
    if statuses.keys() - {"success", "refund"}:
        failed.append("requests not settled")
    if arguments.rebalancing and inventory_problems:
        failed.append("inventory refused or refunded with rebalancing")
    return Report(document, failed)


def _first_inventory_problem(
    outcomes: list[Outcome], rows: dict[str, Request], soak: Soak
) -> dict[str, Any]:
    """When inventory was first refused at quote, and first refunded (the request's last
    update), in seconds into the run and as a share of the time intents were being sent."""

    def share(seconds: float) -> float:
        return round(seconds / soak.sending_seconds, 3) if soak.sending_seconds else 0.0

    refused = [o for o in outcomes if o.refused in INVENTORY_CODES]
    refunds = [
        (_seconds_since(soak.started_at, rows[o.request_id].updated_at), o)
        for o in outcomes
        if o.request_id in rows and rows[o.request_id].fail_reason in INVENTORY_CODES
    ]
    found: dict[str, Any] = {}
    if refused:
        first = min(refused, key=lambda o: o.at)
        found["refusedAtQuote"] = {
            "intent": first.plan.index,
            "atSeconds": round(first.at, 1),
            "ofSending": share(first.at),
        }
    if refunds:
        at, outcome = min(refunds, key=lambda pair: pair[0])
        found["refunded"] = {
            "intent": outcome.plan.index,
            "atSeconds": round(at, 1),
            "ofSending": share(at),
        }
    return found


def _seconds_since(start: datetime, moment: datetime) -> float:
    """`moment` (the database's timestamp: UTC, with or without its zone) after `start`."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return (aware - start).total_seconds()


def _print(report: Report) -> None:
    document = report.document
    for name in (
        "database",
        "rebalancing",
        "rebalancerInBuild",
        "intents",
        "toHotChain",
        "sigkills",
        "sent",
        "statuses",
        "refundsByReason",
        "refusedAtQuote",
        "inventoryRefusalsAndRefunds",
        "firstRefusalsAtQuote",
        "sendingSeconds",
        "firstInventoryProblem",
        "booksUnexplainedPerCheckpoint",
        "inventorySamples",
        "longestSampleGapSeconds",
        "moneyInvariant",
        "ordersFilledOnChain",
        "doubleFills",
        "wallSeconds",
    ):
        print(f"{name}: {document[name]}")
    print("inventory (start / minimum / target / maximum), dips below minimum:")
    for holding, held in document["startingInventory"].items():
        dips = document["dipsBelowMinimum"][holding]
        print(
            f"  {holding}: {held['start']} / {held['minimum']} / {held['target']} /"
            f" {held['maximum']}; {dips['dips']} dips, first at {dips['firstDipAtSeconds']} s,"
            f" back above in {dips['backAboveMinimumSeconds']} s,"
            f" still below at the end: {dips['stillBelowAtEnd']}"
        )
    print("failed: " + (", ".join(report.failed) if report.failed else "nothing"))


def _chains(deployment: Path) -> dict[int, Chain]:
    document = tomllib.loads(deployment.read_text())
    return {
        chain["id"]: Chain(
            chain["id"],
            chain["http_rpc_url"],
            next(c["address"] for c in chain["erc20_currencies"] if c["symbol"] == "USDC"),
            chain["contracts"]["depository"],
        )
        for chain in document["chains"]
    }


def _service(home: Path, deployment: Path, database: str) -> ServiceProcess:
    """`crossfill run` on the soak's deployment file, rate limits off; started."""
    settings = service_settings(
        home,
        deployment,
        database_url=database,
        admin_token=OPERATOR,
        rate_limit_anonymous_per_minute=0,
        rate_limit_key_per_minute=0,
    )
    # A loaded machine may take minutes to start it (its first read of every chain).
    service = ServiceProcess(settings, ready_timeout=START_TIMEOUT_SECONDS)
    service.start()
    return service


def _drive(
    soak: Soak, watch: TreasuryWatch, arguments: argparse.Namespace, chain_ids: list[int]
) -> list[Outcome]:
    """Every intent sent while the service is killed now and then, the treasury watched from
    the start (until `watch.finish()`); their outcomes."""
    soak.started = watch.started = time.monotonic()
    soak.started_at = datetime.now(UTC)
    watch.checkpoint()  # the books as opened
    watch.start(max(1, arguments.intents // CHECKPOINTS))
    killer = Killer(
        soak.service, arguments.kills, arguments.seconds_between_kills, watch.service_lock
    )
    killing = threading.Thread(target=killer.run, daemon=True)
    killing.start()
    try:
        with ThreadPoolExecutor(arguments.concurrency) as pool:
            outcomes = list(pool.map(soak.one, plans(chain_ids, arguments.intents)))
    finally:
        killer.stop.set()
        killing.join(120)
    soak.sending_seconds, soak.kills = time.monotonic() - soak.started, killer.kills
    return outcomes


def run(arguments: argparse.Namespace) -> int:
    started = time.monotonic()
    home = Path(tempfile.mkdtemp(prefix="crossfill-skewed-soak-"))
    peer_port = free_port()
    devnet = start_devnet(
        DevnetOptions(
            chain_count=3,
            block_time=1,
            peer=arguments.rebalancing,
            peer_port=peer_port if arguments.rebalancing else None,
        ),
        deployment_path=home / "devnet.toml",
        log_dir=home,
    )
    database, drop_database = soak_database(arguments.database, home, "crossfill_skewed")
    arguments.database_url = database
    peer: PeerService | None = None
    service: ServiceProcess | None = None
    watch: TreasuryWatch | None = None
    try:
        chains = _chains(home / "devnet.toml")
        limits = {
            (chain, currency.symbol): sized(arguments.intents, currency, chain == HOT_CHAIN)
            for chain in chains
            for currency in CURRENCIES
        }
        _size_inventories(chains, limits)
        holders = UsdcHolders(
            chains, arguments.concurrency, arguments.intents * USDC.order // len(CURRENCIES)
        )
        deployment = _soak_deployment(home / "devnet.toml", limits, chains, arguments.rebalancing)
        if arguments.rebalancing:
            peer = _peer(home, peer_port)
        service = _service(home, deployment, database)
        key = create_api_key(service, OPERATOR, "skewed-soak")
        soak = Soak(service, key, chains, holders, arguments.rate)
        running = service
        watch = TreasuryWatch(lambda: running.base_url, OPERATOR, lambda: soak.sent)
        outcomes = _drive(soak, watch, arguments, sorted(chains))
        rows = _settled(database, outcomes, arguments.settle_seconds)
        # The last repayments and rebalances land, then the books at the end.
        time.sleep(REPAYMENT_MAX_AGE_SECONDS + 5)
        watch.finish()
        watch.sample()
        watch.checkpoint()
        loaded = load_deployment(deployment, mode=Mode.DEVNET, sections=SECTIONS)
        money = wait_until_accounted(
            lambda: account_for_money(loaded, database, since={}), timeout=120
        )
        report = _report(
            arguments,
            outcomes,
            rows,
            watch,
            limits,
            money,
            _double_fills(chains, deployment),
            soak,
            time.monotonic() - started,
        )
        _print(report)
        json_path = arguments.json or home / "skewed-soak.json"
        Path(json_path).write_text(json.dumps(report.document, indent=2))
        print(f"JSON summary: {json_path}")
        return 1 if report.failed else 0
    finally:
        if watch is not None:
            watch.finish()
        if service is not None:
            service.stop()
        if peer is not None:
            peer.stop()
        devnet.stop()
        drop_database()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--intents", type=int, default=1000)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument(
        "--no-rebalancing", dest="rebalancing", action="store_false", help="no bridge, no targets"
    )
    parser.add_argument("--rate", type=float, default=2.0, help="intents sent per second")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--kills", type=int, default=8)
    parser.add_argument("--seconds-between-kills", type=float, default=30.0)
    parser.add_argument("--settle-seconds", type=float, default=300.0)
    parser.add_argument("--json", type=Path, default=None, help="where the summary goes")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
