"""With PostgreSQL, API processes without workers hear from the one with them: a socket held
by one API app sees status changes another app makes, and a deposit hint sent to an API-only
app reaches the other app's indexer.

Both apps run in this test's process but share nothing except the database: the serving app's
outbox tail finds the events there (woken by NOTIFY or its poll); hints travel by NOTIFY.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from websockets.asyncio.client import connect

from crossfill_client import RequestStatus
from tests.conftest import RunningDevnet
from tests.e2e.bridging import rpc_urls
from tests.e2e.test_websocket import BRIDGED, _quote, _send, _updates_until_success
from tests.e2e.user_client import SENT_ONLY, UserClient, evm_wallet
from tests.support.service import ServiceThread, service_settings
from tests.support.waiting import wait_for


def test_updates_reach_a_socket_on_another_api_process(
    postgres_url: str, devnet: RunningDevnet, tmp_path: Path
) -> None:
    settings = service_settings(tmp_path, devnet.deployment_path, database_url=postgres_url)
    # One process runs the workers (it makes every status change); the other only serves.
    workers = ServiceThread(settings, devnet.deployment, run_workers=True).start()
    api_only = ServiceThread(settings, devnet.deployment).start()
    try:
        with UserClient(workers.base_url, rpc_urls(devnet)) as user_client:
            quote, user = _quote(user_client, devnet)
            url = api_only.base_url.replace("http://", "ws://") + "/ws"

            def send() -> None:
                user_client.execute(quote, evm_wallet(user), options=SENT_ONLY)

            async def scenario() -> list[str]:
                async with connect(url) as socket:
                    await socket.recv()  # ready
                    subscribed = await _send(socket, "subscribe", quote.request_id)
                    assert subscribed["status"] == "success"
                    await asyncio.to_thread(send)
                    return [u["data"]["status"] for u in await _updates_until_success(socket)]

            assert asyncio.run(scenario()) == BRIDGED
    finally:
        api_only.stop()
        workers.stop()


def test_a_deposit_hint_sent_to_an_api_replica_reaches_the_indexer(
    postgres_url: str, devnet: RunningDevnet, tmp_path: Path
) -> None:
    # Scans a minute apart: only the forwarded hint can make the deposit seen within seconds.
    settings = service_settings(
        tmp_path, devnet.deployment_path, database_url=postgres_url, worker_interval_seconds=60
    )
    workers = ServiceThread(settings, devnet.deployment, run_workers=True).start()
    api_only = ServiceThread(settings, devnet.deployment).start()
    try:
        with UserClient(api_only.base_url, rpc_urls(devnet)) as user_client:
            quote, user = _quote(user_client, devnet)
            time.sleep(1)  # the indexers' first scan is behind them
            # The user's client hints its deposit to the replica it talks to.
            user_client.execute(quote, evm_wallet(user), options=SENT_ONLY)
            assert user_client.answered("/transactions/index") == {"message": "Success"}

            def seen() -> bool:
                return user_client.status(quote.request_id).status is not RequestStatus.WAITING

            assert wait_for(seen, timeout=20, interval=0.2), "the hint did not reach the indexer"
    finally:
        api_only.stop()
        workers.stop()
