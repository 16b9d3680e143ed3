"""The API and the workers on separate hosts: two `crossfill api` replicas and one `crossfill run
--workers-only`, each in a network namespace of its own (`tests.support.hosts`), reaching
PostgreSQL, Redis and the chains over the network (relays on the hosts' bridge), as machines
would. Quotes are answered on each API host; a websocket on one API host sees the updates of
a bridge whose deposit hint went to the other and which the workers host filled, the hint
travelling by PostgreSQL `NOTIFY`; a client's rate limit is one budget across both API hosts
(Redis); and a rolling restart of the API hosts behind a load balancer that probes `/readyz`
fails no request of a steady load (the replicas drain: `CROSSFILL_DRAIN_SECONDS`).

Needs root (network namespaces): skipped, saying why, where the suite does not run as root
or cannot make a namespace; under CI=true as root, failed instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import httpx
import pytest
import redis
import tomli_w
from eth_account import Account
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect

from crossfill.devnet.child_process import free_port
from crossfill.settings import Settings
from crossfill.store.deposit_hints import CHANNEL
from tests.conftest import RunningDevnet, fresh_postgres_database, running_in_ci
from tests.e2e.bridging import ORIGIN, native_bridge, request_quote, rpc_urls
from tests.e2e.test_websocket import BRIDGED, _quote, _send, _updates_until_success
from tests.e2e.user_client import SENT_ONLY, UserClient, evm_wallet
from tests.support.balancer import Backend, TcpBalancer
from tests.support.database import (
    POSTGRES_ADMIN_DSN,
    drop_postgres_database,
    postgres_database_url,
)
from tests.support.hosts import HostNetwork, host_network, unavailable
from tests.support.service import ServiceProcess, run_cli, service_settings
from tests.support.waiting import wait_for

POSTGRES_PORT, REDIS_PORT = 5432, 6379
# A Redis database of its own: the suite runs on several workers at once.
REDIS_DATABASE = 5
KEY_BUDGET = 6  # requests a minute for an API key
# Ten of the balancer's probe intervals; `CROSSFILL_TEST_DRAIN_SECONDS=0` shows requests failing
# without a drain (docs/reliability.md).
DRAIN_SECONDS = float(os.environ.get("CROSSFILL_TEST_DRAIN_SECONDS", "2"))
LOAD_CLIENTS = 4


@dataclass
class Cluster:
    network: HostNetwork
    workers: ServiceProcess
    apis: list[ServiceProcess]
    database: str  # its name
    home: Path


def _over(network: HostNetwork, deployment_path: Path, home: Path) -> Path:
    """The devnet's deployment with each chain's RPC (HTTP and websocket, one port on anvil)
    reached through a relay on the hosts' network."""
    document = tomllib.loads(deployment_path.read_text())
    for chain in document["chains"]:
        relay = network.relay(urlsplit(chain["http_rpc_url"]).port or 0)
        chain["internal_rpc_url"] = f"http://{network.gateway}:{relay.port}"
        chain["internal_ws_rpc_url"] = f"ws://{network.gateway}:{relay.port}"
    path = home / "deployment-over-the-network.toml"
    path.write_text(tomli_w.dumps(document))
    return path


def _forget_rate_limits() -> None:
    store = redis.Redis(port=REDIS_PORT, db=REDIS_DATABASE)
    try:
        for stale in store.scan_iter("crossfill:ratelimit:*"):
            store.delete(stale)
    finally:
        store.close()


@pytest.fixture(scope="module")
def cluster(devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    why_not = unavailable()
    if why_not is not None:
        # Root under CI can make namespaces: there, not running is a failure.
        if running_in_ci() and os.geteuid() == 0:
            pytest.fail(why_not)
        pytest.skip(why_not)
    home = tmp_path_factory.mktemp("hosts")
    name = asyncio.run(fresh_postgres_database())
    with ExitStack() as stack:
        stack.callback(lambda: asyncio.run(drop_postgres_database(name)))
        _forget_rate_limits()
        network = stack.enter_context(host_network())
        postgres, redis_relay = network.relay(POSTGRES_PORT), network.relay(REDIS_PORT)
        database_url = postgres_database_url(name).replace(
            "127.0.0.1:5432", f"{network.gateway}:{postgres.port}"
        )
        shared = service_settings(
            home,
            _over(network, devnet.deployment_path, home),
            database_url=database_url,
            redis_url=f"redis://{network.gateway}:{redis_relay.port}/{REDIS_DATABASE}",
            rate_limit_anonymous_per_minute=0,  # every client here comes from the gateway
            rate_limit_key_per_minute=KEY_BUDGET,
            drain_seconds=DRAIN_SECONDS,
        )

        def on(role: str) -> Settings:
            (home / role).mkdir()
            return shared.model_copy(update={"home": home / role})

        # The workers host migrates the database: it starts first.
        workers = ServiceProcess.workers_only(
            on("workers"), ops_port=free_port(), host=network.add_host("workers")
        )
        stack.enter_context(workers.running())
        apis = [
            ServiceProcess(
                on(role), command=("api",), host=network.add_host(role), ready_path="/readyz"
            )
            for role in ("api-a", "api-b")
        ]
        for api in apis:
            stack.enter_context(api.running())
        yield Cluster(network, workers, apis, name, home)
        for service in (workers, *apis):
            service.assert_log_clean()


def test_each_api_host_quotes_and_finds_the_others_quotes(cluster: Cluster) -> None:
    ids = []
    for api in cluster.apis:
        with httpx.Client(base_url=api.base_url, timeout=10) as http:
            quote = request_quote(http, native_bridge(Account.create().address))
            ids.append(quote["steps"][0]["requestId"])
    for api, request_id in zip(cluster.apis, reversed(ids), strict=True):
        status = httpx.get(
            f"{api.base_url}/intents/status/v3", params={"requestId": request_id}, timeout=10
        )
        assert status.status_code == 200, status.text
        assert status.json()["status"] == "waiting"


def test_a_socket_on_one_api_host_follows_a_bridge_hinted_on_the_other(
    cluster: Cluster, devnet: RunningDevnet
) -> None:
    watching, hinted = cluster.apis
    socket_url = watching.base_url.replace("http://", "ws://") + "/ws"
    with UserClient(hinted.base_url, rpc_urls(devnet)) as user_client:
        quote, user = _quote(user_client, devnet)

        def send() -> None:
            user_client.execute(quote, evm_wallet(user), options=SENT_ONLY)

        async def scenario() -> tuple[list[str], list[str]]:
            heard: list[str] = []
            # A third party on the database hears what the API host told the workers host.
            listener = await asyncpg.connect(_database_dsn(cluster.database))
            await listener.add_listener(CHANNEL, lambda *args: heard.append(args[-1]))
            try:
                async with connect(socket_url) as socket:
                    await socket.recv()  # ready
                    subscribed = await _send(socket, "subscribe", quote.request_id)
                    assert subscribed["status"] == "success"
                    await asyncio.to_thread(send)
                    updates = await _updates_until_success(socket)
            finally:
                await listener.close()
            return [update["data"]["status"] for update in updates], heard

        statuses, heard = asyncio.run(scenario())
        assert statuses == BRIDGED
        assert user_client.hints_answered() == [200]
        record = user_client.status(quote.request_id)
    (deposit,) = record.in_tx_hashes
    assert any(message.startswith(f"{ORIGIN}:{deposit}:") for message in heard), heard


def test_a_hint_posted_on_an_api_host_is_acted_on_by_the_workers_host(cluster: Cluster) -> None:
    """A hint for a transaction nobody sent: only the hint can make the workers host ask the
    origin chain for its receipt (the API host asks no chain: it forwards)."""
    before = _receipts_asked(cluster.workers)
    hinted = httpx.post(
        f"{cluster.apis[1].base_url}/transactions/index",
        json={"chainId": ORIGIN, "txHash": f"0x{secrets.token_hex(32)}"},
        timeout=10,
    )
    assert hinted.json() == {"message": "Success"}
    assert wait_for(lambda: _receipts_asked(cluster.workers) > before, timeout=10), before


def _receipts_asked(workers: ServiceProcess) -> float:
    """The receipts the workers host has asked the origin chain for so far."""
    scrape = httpx.get(f"{workers.probe_url}/metrics", timeout=10)
    assert scrape.status_code == 200, scrape.text
    return sum(
        sample.value
        for family in text_string_to_metric_families(scrape.text)
        for sample in family.samples
        if sample.name == "crossfill_rpc_calls_total"
        and sample.labels["chain_id"] == str(ORIGIN)
        and sample.labels["call"] == "eth_getTransactionReceipt"
    )


def _database_dsn(name: str) -> str:
    return f"{POSTGRES_ADMIN_DSN.rsplit('/', 1)[0]}/{name}"


def test_a_clients_rate_limit_is_spent_across_both_api_hosts(cluster: Cluster) -> None:
    created = run_cli(
        "keys",
        "create",
        "--name",
        "two hosts",
        home=cluster.home,
        database_url=postgres_database_url(cluster.database),
        log_level="WARNING",
    )
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    codes = [
        httpx.get(
            f"{cluster.apis[turn % 2].base_url}/chains", headers={"x-api-key": key}, timeout=10
        ).status_code
        for turn in range(KEY_BUDGET + 1)
    ]
    assert codes == [200] * KEY_BUDGET + [429]


class Load:
    """Clients quoting and asking for their quotes' status through the balancer, one request
    at a time each, none retried; every answer other than 200 counted as a failure."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.answered = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._client) for _ in range(LOAD_CLIENTS)]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _client(self) -> None:
        with httpx.Client(base_url=self.url, timeout=10) as http:
            while not self._stop.is_set():
                quoted = self._ask(
                    http, "POST", "/quote/v2", json=native_bridge(Account.create().address)
                )
                if quoted is None:
                    continue
                request_id = quoted["steps"][0]["requestId"]
                self._ask(http, "GET", "/intents/status/v3", params={"requestId": request_id})

    def _ask(self, http: httpx.Client, method: str, path: str, **options: Any) -> Any:
        try:
            answer = http.request(method, path, **options)
        except httpx.HTTPError as exc:
            self.failures.append(f"{method} {path}: {type(exc).__name__} {exc}")
            return None
        if answer.status_code != 200:
            self.failures.append(f"{method} {path}: {answer.status_code} {answer.text[:200]}")
            return None
        self.answered += 1
        return answer.json()


def test_a_rolling_restart_of_the_api_hosts_fails_no_request(cluster: Cluster) -> None:
    backends = [Backend(api.settings.host, api.port) for api in cluster.apis]
    balancer = TcpBalancer(backends).start()
    try:
        assert wait_for(lambda: balancer.ready == set(backends), timeout=10, interval=0.1)
        with Load(balancer.url) as load:
            time.sleep(2)
            for api, backend in zip(cluster.apis, backends, strict=True):
                assert api.stop(timeout=30) == 0, api.log_tail()  # SIGTERM: drains, then stops
                api.start()
                assert wait_for(_in(balancer, backend), timeout=10, interval=0.1)
            time.sleep(2)
        answered, failures = load.answered, load.failures
    finally:
        balancer.stop()
    connections = {
        f"{backend.host}:{backend.port}": n for backend, n in balancer.connections.items()
    }
    print(
        f"rolling restart: {answered} answered, {len(failures)} failed; connections {connections}"
    )
    assert failures == [], json.dumps(failures[:20], indent=1)
    assert answered > 50, answered
    assert balancer.turned_away == 0
    assert all(balancer.connections[backend] > 0 for backend in backends), balancer.connections


def _in(balancer: TcpBalancer, backend: Backend) -> Callable[[], bool]:
    """Whether the balancer sends new connections to `backend` again."""
    return lambda: backend in balancer.ready
