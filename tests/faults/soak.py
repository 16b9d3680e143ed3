"""The long fault run (`make faults`): hundreds of intents through `crossfill run` while its
chains' RPC misbehaves and the service is killed, then every order is checked on chain.

    python -m tests.faults.soak --intents 300 --kills 10 --database sqlite|postgres

A devnet (1 s blocks) with an RPC fault proxy in front of each chain; the service reaches the
chains only through them; clients (funding, deposits) reach anvil directly. While intents
run, a chaos loop injects a fault at a time (HTTP 502 on everything, 429 with Retry-After,
dropped connections, lost answers of eth_sendRawTransaction, a node lagging two blocks,
batches refused (with or without that lagging node: the service then reads one call at a
time, and goes on so for a while after the fault), slow answers, a stale head, a SIGSTOP of a
few seconds, `anvil_reorg` of 1-3 blocks on either chain (their transactions mined again
later, as after a real reorg, or in half of them all but the solver's, which the service must
send again), and on PostgreSQL a second `crossfill run` on the same database for the first
20 s and now and then for a while) and SIGKILLs the service now and then (restarted at once).
Every sixth deposit pays half: it must be refunded; the others must be filled, and their
deposits repaid to the solver as they come due (batches of five at most). Every
deposit is hinted (POST /transactions/index) to the service, and to the second process while
it runs, so both judge deposits first seen on a hint and confirmed at a later head. At the end,
per order, on chain: filled exactly once or refunded exactly once, never both, never neither;
the final status as the chain says; the key's webhooks all delivered, in an order the status
machine allows; and the money invariant (`tests.money_invariant`): every unit deposited has
exactly one outcome read from the chains' events. Prints the counts; exits 1 if any invariant
broke.
"""

from __future__ import annotations

import argparse
import itertools
import random
import signal
import sys
import tempfile
import threading
import time
import tomllib
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import tomli_w
from eth_account import Account
from web3 import Web3
from web3.exceptions import Web3RPCError

from crossfill.config import load_deployment
from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.deploy import contract_at
from crossfill.devnet.network import DevnetOptions, start_devnet
from crossfill.domain.status import RequestStatus, can_move
from crossfill.kinds.registry import SECTIONS
from crossfill.settings import Mode
from tests.e2e.receiver import Receiver
from tests.e2e.test_crash_safety import _call_target
from tests.faults.reorgs import reorg_returning_transactions
from tests.faults.rpc_proxy import EVERY_METHOD, Fault, RpcFaultProxy
from tests.money_invariant import MoneyReport, account_for_money, wait_until_accounted
from tests.support.service import ServiceProcess, service_settings
from tests.support.soaks import create_api_key, hint, retrying, soak_database
from tests.support.wallets.evm import sign_item, wallet_fees

ETH = 10**18
UNDERPAID_EVERY = 6
SECOND_PROCESS_FIRST_SECONDS = 20.0
OPERATOR = "soak-operator-token"


@dataclass
class Intent:
    request_id: str
    order_id: str
    refund_to: str
    underpaid: bool
    # The origin chain and the signed deposit, for a wallet's re-send after a reorg.
    origin_rpc_url: str
    deposit: bytes
    depositor: str


@dataclass
class Chaos:
    proxies: list[RpcFaultProxy]
    service: ServiceProcess
    rng: random.Random
    kills_wanted: int
    seconds_between_kills: float
    # The chains themselves (not the proxies), for reorgs.
    rpc_urls: list[str] = field(default_factory=list)
    # PostgreSQL only: a second `crossfill run` on the same database now and then.
    second_process: ServiceProcess | None = None
    injected: Counter[str] = field(default_factory=Counter)
    kills: int = 0
    reorged_transactions: int = 0
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _fault(self) -> tuple[str, Callable[[RpcFaultProxy], None]]:
        choices: list[tuple[str, Callable[[RpcFaultProxy], None]]] = [
            ("502", lambda p: p.fail(EVERY_METHOD, Fault(status=502))),
            ("429", lambda p: p.fail(EVERY_METHOD, Fault(status=429, retry_after=1))),
            ("dropped", lambda p: p.fail(EVERY_METHOD, Fault(drop=True))),
            (
                "lost send answer",
                lambda p: p.fail("eth_sendRawTransaction", Fault(lose_answer=True)),
            ),
            ("estimateGas 502", lambda p: p.fail("eth_estimateGas", Fault(status=502))),
            ("slow", lambda p: p.fail(EVERY_METHOD, Fault(delay_seconds=1.5))),
            ("lagging node", lambda p: setattr(p, "lag_blocks", 2)),
            ("stale head", _stale_head),
            ("no batches", lambda p: setattr(p, "refuse_batches", True)),
            ("no batches, lagging node", _lagging_without_batches),
        ]
        return self.rng.choice(choices)

    def kill(self) -> None:
        with self.lock:
            self.service.kill()
            self.service.start()
            self.kills += 1

    def freeze(self) -> None:
        """SIGSTOP for a few seconds (a VM paused), then SIGCONT."""
        with self.lock:
            assert self.service.process is not None
            self.service.process.send_signal(signal.SIGSTOP)
            self.stop.wait(self.rng.uniform(2, 5))
            self.service.process.send_signal(signal.SIGCONT)

    def running(self) -> list[ServiceProcess]:
        """The processes up now: the service, and the second one while it runs."""
        second = self.second_process
        up = second is not None and second.process is not None and second.process.poll() is None
        return [self.service, second] if up and second is not None else [self.service]

    def second_writer(self, seconds: float | None = None) -> None:
        """Another `crossfill run` on the same database for a while (an operator's mistake)."""
        assert self.second_process is not None
        self.second_process.start()
        self.stop.wait(seconds if seconds is not None else self.rng.uniform(5, 10))
        self.second_process.stop()

    def reorg(self) -> None:
        """A reorg of 1 to 3 blocks on either chain (deposits, fills, refunds in them are
        mined again later, as on a real chain); in half of them no node puts the solver's
        transactions back (the service must send them again)."""
        depth = self.rng.randint(1, 3)
        lost = self.rng.random() < 0.5
        returned = reorg_returning_transactions(
            self.rng.choice(self.rpc_urls),
            depth,
            1,
            lost_from=frozenset({accounts.solver().address.lower()}) if lost else frozenset(),
        )
        self.injected[f"reorg {depth}" + (", the solver's transactions lost" if lost else "")] += 1
        self.reorged_transactions += returned
        self.stop.wait(self.rng.uniform(1.0, 3.0))

    def run(self) -> None:
        if self.second_process is not None:
            # While the first deposits come (each hinted to both): two processes judge them.
            self.second_writer(SECOND_PROCESS_FIRST_SECONDS)
            self.injected["second process"] += 1
        last_kill = time.monotonic()
        while not self.stop.is_set():
            if (
                self.kills < self.kills_wanted
                and time.monotonic() - last_kill > self.seconds_between_kills
            ):
                self.kill()
                last_kill = time.monotonic()
                continue
            draw = self.rng.random()
            if draw < 0.08:
                self.freeze()
                self.injected["SIGSTOP"] += 1
                continue
            if draw < 0.14 and self.second_process is not None:
                self.second_writer()
                self.injected["second process"] += 1
                continue
            if draw < 0.22 and self.rpc_urls:
                self.reorg()
                continue
            name, apply = self._fault()
            proxy = self.rng.choice(self.proxies)
            apply(proxy)
            self.injected[name] += 1
            self.stop.wait(self.rng.uniform(0.5, 3.0))
            proxy.heal()
            self.stop.wait(self.rng.uniform(0.5, 2.0))


def _stale_head(proxy: RpcFaultProxy) -> None:
    """Every answer from a node three blocks behind the chain."""
    proxy.lag_blocks, proxy.lag_everything = 3, True


def _lagging_without_batches(proxy: RpcFaultProxy) -> None:
    """An endpoint taking no batches, behind which logs come from a node two blocks behind."""
    proxy.refuse_batches, proxy.lag_blocks = True, 2


def _proxied_deployment(path: Path, proxies: list[RpcFaultProxy]) -> Path:
    document = tomllib.loads(path.read_text())
    for chain, proxy in zip(document["chains"], proxies, strict=True):
        chain["internal_rpc_url"] = proxy.url
    # The solver repaid in small batches all along, through the same faults and kills.
    document["repayment"] = {"batch_size": 5, "max_age_seconds": 10, "min_batch_value_usd": "100"}
    proxied = path.with_name("proxied.toml")
    proxied.write_text(tomli_w.dumps(document))
    return proxied


def _one_intent(
    index: int,
    service: ServiceProcess,
    key: str,
    rpc_urls: dict[int, str],
    ids: tuple[int, int],
    hinted: Callable[[], list[ServiceProcess]],
) -> Intent:
    origin, destination = ids
    user = Account.create()
    refund_to = Account.create().address
    body = {
        "user": user.address,
        "recipient": Account.create().address,
        "refundTo": refund_to,
        "originChainId": origin,
        "destinationChainId": destination,
        "originCurrency": "0x" + "00" * 20,
        "destinationCurrency": "0x" + "00" * 20,
        "amount": str(ETH // 100),
        "tradeType": "EXACT_INPUT",
    }
    with httpx.Client(timeout=10, headers={"x-api-key": key}) as http:
        answer = retrying(lambda: http.post(f"{service.base_url}/quote/v2", json=body))
    assert answer.status_code == 200, answer.text
    quote = answer.json()
    underpaid = index % UNDERPAID_EVERY == 0
    amount = int(quote["details"]["currencyIn"]["amount"]) // (2 if underpaid else 1)
    order_id = quote["protocol"]["v2"]["orderId"]
    item = quote["steps"][0]["items"][0]["data"]
    fees = wallet_fees(Web3(Web3.HTTPProvider(rpc_urls[origin])))
    signed = sign_item(user, item, nonce=0, fees=fees, gas=100_000, value=amount)
    request_id = quote["steps"][0]["requestId"]
    intent = Intent(
        request_id,
        order_id,
        refund_to,
        underpaid,
        rpc_urls[origin],
        signed.raw_transaction,
        user.address,
    )
    _send_deposit(intent)
    for process in hinted():
        hint(process, origin, signed.hash.to_0x_hex())
    return intent


def _send_deposit(intent: Intent) -> None:
    """Broadcast the signed deposit, as a wallet does (again, if a reorg lost it). The user's
    funds came from `anvil_setBalance`, which a reorg of its block may undo: set again."""
    web3 = Web3(Web3.HTTPProvider(intent.origin_rpc_url))
    for _ in range(10):
        set_native_balance(intent.origin_rpc_url, intent.depositor, 10 * ETH)
        try:
            web3.eth.send_raw_transaction(intent.deposit)
            return
        except Web3RPCError as exc:
            if "already" in str(exc) or "nonce too low" in str(exc):
                return  # in the pool, or mined
            time.sleep(0.5)
    raise RuntimeError(f"deposit of {intent.request_id} could not be sent")


def _resend_lost_deposits(intents: list[Intent]) -> int:
    """A wallet whose deposit is neither mined nor pending sends it again."""
    lost = 0
    for intent in intents:
        web3 = Web3(Web3.HTTPProvider(intent.origin_rpc_url))
        if web3.eth.get_transaction_count(Web3.to_checksum_address(intent.depositor)) == 0:
            lost += 1
            _send_deposit(intent)
    return lost


def _statuses(service: ServiceProcess, intents: list[Intent]) -> dict[str, str]:
    with httpx.Client(base_url=service.base_url, timeout=10) as http:

        def status(request_id: str) -> str:
            answer = retrying(
                lambda: http.get("/intents/status/v3", params={"requestId": request_id})
            )
            found: str = answer.json()["status"]
            return found

        return {intent.request_id: status(intent.request_id) for intent in intents}


@dataclass
class Findings:
    fills: Counter[str]
    refunds: Counter[str]
    final: dict[str, str]
    webhook_problems: list[str]
    money: MoneyReport = field(default_factory=MoneyReport)

    def broken(self, intents: list[Intent]) -> dict[str, list[str]]:
        problems: dict[str, list[str]] = {
            "double fills": [],
            "double refunds": [],
            "filled and refunded": [],
            "stranded (neither)": [],
            "wrongful refunds": [],
            "status differs from chain": [],
            "webhooks lost or out of order": self.webhook_problems,
            "units unaccounted (money invariant)": self.money.unaccounted,
            "units unsettled (money invariant)": self.money.unsettled,
        }
        for intent in intents:
            filled = self.fills[intent.order_id]
            refunded = self.refunds[intent.refund_to.lower()]
            status = self.final.get(intent.request_id)
            if filled > 1:
                problems["double fills"].append(intent.request_id)
            if refunded > 1:
                problems["double refunds"].append(intent.request_id)
            if filled and refunded:
                problems["filled and refunded"].append(intent.request_id)
            if not filled and not refunded:
                problems["stranded (neither)"].append(intent.request_id)
            if refunded and not intent.underpaid:
                problems["wrongful refunds"].append(intent.request_id)
            expected = "success" if filled else "refund" if refunded else None
            if expected is not None and status != expected:
                problems["status differs from chain"].append(f"{intent.request_id}: {status}")
        return problems


def _on_chain(
    deployment: Path, intents: list[Intent], receiver: Receiver, final: dict[str, str]
) -> Findings:
    document = tomllib.loads(deployment.read_text())
    origin, destination = document["chains"]
    origin_web3 = Web3(Web3.HTTPProvider(origin["http_rpc_url"]))
    destination_web3 = Web3(Web3.HTTPProvider(destination["http_rpc_url"]))
    filler = contract_at(destination_web3, "Filler", destination["contracts"]["filler"])
    depository = contract_at(origin_web3, "Depository", origin["contracts"]["depository"])
    fills = Counter(
        "0x" + event.args["orderId"].hex()
        for event in filler.events.OrderFilled().get_logs(from_block=0)
    )
    refunds = Counter(
        _call_target(event.args["call"]).lower()
        for event in depository.events.CallExecuted().get_logs(from_block=0)
    )
    problems = []
    for intent in intents:
        statuses = [d.body["data"]["status"] for d in receiver.accepted(intent.request_id)]
        distinct = [status for status, _ in itertools.groupby(statuses)]
        moves_ok = all(
            can_move(RequestStatus(a), RequestStatus(b)) for a, b in itertools.pairwise(distinct)
        )
        if not distinct or distinct[-1] != final.get(intent.request_id) or not moves_ok:
            problems.append(f"{intent.request_id}: {distinct}")
    return Findings(fills, refunds, final, problems)


def _settle(
    service: ServiceProcess,
    deployment: Path,
    intents: list[Intent],
    receiver: Receiver,
    arguments: argparse.Namespace,
) -> Findings:
    """Wait for every request to end (success or refund) and its webhooks to arrive, within
    bounds, then look on chain."""
    deadline = time.monotonic() + arguments.settle_seconds
    final = _statuses(service, intents)
    while time.monotonic() < deadline and not set(final.values()) <= {"success", "refund"}:
        resent = _resend_lost_deposits(intents)
        if resent:
            print(f"wallets sent {resent} deposits again (lost to reorgs)")
        time.sleep(2)
        final = _statuses(service, intents)
    deadline = time.monotonic() + 60
    findings = _on_chain(deployment, intents, receiver, final)
    while findings.webhook_problems and time.monotonic() < deadline:
        time.sleep(2)
        findings = _on_chain(deployment, intents, receiver, final)
    chains = load_deployment(deployment, mode=Mode.DEVNET, sections=SECTIONS)
    findings.money = wait_until_accounted(
        lambda: account_for_money(chains, arguments.database_url, since={}), timeout=120
    )
    return findings


def _service(home: Path, database: str, proxies: list[RpcFaultProxy]) -> ServiceProcess:
    """`crossfill run` reaching the chains only through the proxies, rate limits off."""
    settings = service_settings(
        home,
        _proxied_deployment(home / "devnet.toml", proxies),
        database_url=database,
        admin_token=OPERATOR,
        rate_limit_anonymous_per_minute=0,
        rate_limit_key_per_minute=0,
    )
    return ServiceProcess(settings)


def run(arguments: argparse.Namespace) -> int:
    started = time.monotonic()
    home = Path(tempfile.mkdtemp(prefix="crossfill-soak-"))
    devnet = start_devnet(
        DevnetOptions(block_time=1), deployment_path=home / "devnet.toml", log_dir=home
    )
    database, drop_database = soak_database(arguments.database, home, "crossfill_soak")
    arguments.database_url = database
    proxies: list[RpcFaultProxy] = []
    receiver: Receiver | None = None
    service: ServiceProcess | None = None
    try:
        document = tomllib.loads((home / "devnet.toml").read_text())
        rpc_urls = {chain["id"]: chain["http_rpc_url"] for chain in document["chains"]}
        ids = (document["chains"][0]["id"], document["chains"][1]["id"])
        proxies = [RpcFaultProxy(url).start() for url in rpc_urls.values()]
        service = _service(home, database, proxies)
        service.start()
        key = create_api_key(service, OPERATOR, "soak")
        receiver = Receiver(key)
        service.cli("webhooks", "set", key, receiver.url).check_returncode()
        second = _service(home, database, proxies) if arguments.database == "postgres" else None
        chaos = Chaos(
            proxies,
            service,
            random.Random(arguments.seed),
            kills_wanted=arguments.kills,
            seconds_between_kills=arguments.seconds_between_kills,
            rpc_urls=list(rpc_urls.values()),
            second_process=second,
        )
        chaos_thread = threading.Thread(target=chaos.run, daemon=True)
        chaos_thread.start()
        with ThreadPoolExecutor(arguments.concurrency) as pool:
            intents = list(
                pool.map(
                    lambda index: _one_intent(index, service, key, rpc_urls, ids, chaos.running),
                    range(arguments.intents),
                )
            )
        while chaos.kills < arguments.kills:
            time.sleep(1)
        chaos.stop.set()
        chaos_thread.join(30)
        for proxy in proxies:
            proxy.heal()
        findings = _settle(service, home / "devnet.toml", intents, receiver, arguments)
        problems = findings.broken(intents)
        _print_summary(arguments, intents, chaos, findings, problems, time.monotonic() - started)
        return 1 if any(problems.values()) else 0
    finally:
        if service is not None:
            service.stop()
        if receiver is not None:
            receiver.stop()
        for proxy in proxies:
            proxy.stop()
        devnet.stop()
        drop_database()


def _print_summary(
    arguments: argparse.Namespace,
    intents: list[Intent],
    chaos: Chaos,
    findings: Findings,
    problems: dict[str, list[str]],
    seconds: float,
) -> None:
    underpaid = sum(intent.underpaid for intent in intents)
    print(f"database {arguments.database}, {len(intents)} intents ({underpaid} underpaid)")
    print(f"SIGKILLs {chaos.kills}; faults injected: {dict(chaos.injected)}")
    print(f"transactions mined again after reorgs: {chaos.reorged_transactions}")
    print(f"final statuses: {dict(Counter(findings.final.values()))}")
    print(f"orders filled on chain: {sum(1 for i in intents if findings.fills[i.order_id])}")
    refunded = sum(1 for i in intents if findings.refunds[i.refund_to.lower()])
    print(f"orders refunded on chain: {refunded}")
    print(f"money invariant: {findings.money.summary()}")
    for name, found in problems.items():
        print(f"{name}: {len(found)}" + (f"  e.g. {found[:3]}" if found else ""))
    print(f"took {seconds:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--intents", type=int, default=300)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds-between-kills", type=float, default=8.0)
    parser.add_argument("--settle-seconds", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=1)
    sys.exit(run(parser.parse_args()))


if __name__ == "__main__":
    main()
