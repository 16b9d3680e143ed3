"""With PostgreSQL, a socket held by one API app sees status changes another app makes.

Both apps run in this test's process but share nothing except the database: the serving app's
outbox tail finds the events there (woken by NOTIFY or its poll).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from websockets.asyncio.client import connect

from tests.conftest import RunningDevnet
from tests.e2e.bridging import rpc_urls
from tests.e2e.conftest import ServiceThread, service_settings
from tests.e2e.test_websocket import BRIDGED, _quote, _send, _updates_until_success
from tests.e2e.wallet import execute_steps


def test_updates_reach_a_socket_on_another_api_process(
    postgres_url: str, devnet: RunningDevnet, tmp_path: Path
) -> None:
    settings = service_settings(tmp_path, devnet.deployment_path).model_copy(
        update={"database_url": postgres_url}
    )
    # One process runs the workers (it makes every status change); the other only serves.
    workers = ServiceThread(settings, devnet.deployment, run_workers=True).start()
    api_only = ServiceThread(settings, devnet.deployment).start()
    try:
        quote, user = _quote(workers, devnet)
        request_id = quote["steps"][0]["requestId"]
        url = api_only.base_url.replace("http://", "ws://") + "/ws"

        async def scenario() -> list[str]:
            async with connect(url) as socket:
                await socket.recv()  # ready
                assert (await _send(socket, "subscribe", request_id))["status"] == "success"
                await asyncio.to_thread(execute_steps, quote, user, rpc_urls(devnet))
                return [u["data"]["status"] for u in await _updates_until_success(socket)]

        assert asyncio.run(scenario()) == BRIDGED
    finally:
        api_only.stop()
        workers.stop()
