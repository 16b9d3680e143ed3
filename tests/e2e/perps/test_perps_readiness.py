"""/readyz checks the perps exchange beside the EVM chains: ready while it answers, not ready,
naming it, once it is gone. (This module's exchange is its own: it is stopped here.)"""

from __future__ import annotations

import httpx

from crossfill.devnet.exchange.process import ExchangeProcess
from tests.e2e.perps.conftest import PERPS_ID
from tests.support.waiting import wait_for


def test_readiness_names_the_exchange_once_it_is_gone(
    http: httpx.Client, exchange: ExchangeProcess
) -> None:
    ready = http.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"]["chains"] == {"900001": "ok", "900002": "ok", str(PERPS_ID): "ok"}

    exchange.stop()
    # Probes share one result a second: the first may still be the one from before.
    assert wait_for(lambda: http.get("/readyz").status_code == 503, timeout=5)
    not_ready = http.get("/readyz").json()
    assert not_ready["message"] == f"chains not reachable: {PERPS_ID}"
    assert not_ready["checks"]["chains"]["900001"] == "ok"
    assert not_ready["checks"]["chains"][str(PERPS_ID)].startswith("spotMeta: ")
