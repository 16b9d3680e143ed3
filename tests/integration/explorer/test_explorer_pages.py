"""The explorer's list over many stored requests, through the service's HTTP API: its filters
(the v3 listing's) and cursor pages, a search that names nothing, every kind of bad input
answered with a clear 4xx page, and the operator's view off without an operator token.

No chain is needed: the requests are synthetic, and the service follows no chain."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from crossfill.cli.database import migrated_session
from crossfill.config import load_deployment
from crossfill.devnet.child_process import free_port
from crossfill.kinds.registry import SECTIONS
from crossfill.quoting.response import quote_wire
from crossfill.settings import Settings
from tests.support import quote_fixtures as fx
from tests.support.service import ServiceThread, service_settings
from tests.support.synthetic import BASE_TIME, insert_synthetic, synthetic_requests
from tests.unit.deployment_samples import as_toml, deployment_document

QUOTE = quote_wire(fx.quote(fx.body()), allowance=None, user_balance=None)
DATA = synthetic_requests(200, quote=QUOTE)
_REQUEST_LINK = re.compile(r'href="/explorer/requests/(0x[0-9a-f]{64})"')


def _deployment_file(home: Path) -> Path:
    document = deployment_document()
    nowhere = f"http://127.0.0.1:{free_port()}"  # no chain is asked anything
    for chain in document["chains"]:
        chain["http_rpc_url"], chain["ws_rpc_url"] = nowhere, nowhere.replace("http", "ws")
    path = home / "deployment.toml"
    path.write_text(as_toml(document))
    return path


async def _seed(settings: Settings) -> None:
    async with migrated_session(settings) as session:
        await insert_synthetic(await session.connection(), DATA)
        await session.commit()


def _start(home: Path, **overrides: object) -> ServiceThread:
    path = _deployment_file(home)
    settings = service_settings(home, path, **overrides)
    asyncio.run(_seed(settings))
    deployment = load_deployment(path, mode=settings.mode, sections=SECTIONS)
    return ServiceThread(settings, deployment, follow_heads=False).start()


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    service = _start(tmp_path_factory.mktemp("explorer-pages"))
    try:
        with httpx.Client(base_url=service.base_url, timeout=10) as client:
            yield client
    finally:
        service.stop()


def _listed(page: str) -> list[str]:
    return _REQUEST_LINK.findall(page)


def _page(http: httpx.Client, **params: str) -> str:
    answer = http.get("/explorer", params=params)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    return answer.text


def _by_id() -> dict[str, dict[str, object]]:
    return {str(row["id"]): row for row in DATA.requests}


def test_the_status_filter_lists_only_that_status_a_page_at_a_time(http: httpx.Client) -> None:
    matching = {row["id"] for row in DATA.requests if row["status"] == "refund"}
    first = _page(http, status="refund")
    shown = _listed(first)
    assert len(shown) == 20 < len(matching)
    next_link = re.search(r'href="(/explorer\?[^"]*continuation=[^"]+)" rel="next"', first)
    assert next_link is not None
    second = http.get(next_link.group(1).replace("&amp;", "&")).text
    assert set(_listed(second)).isdisjoint(shown)
    assert set(shown) | set(_listed(second)) <= matching


def test_chain_currency_and_time_filters_narrow_the_list(http: httpx.Client) -> None:
    rows = _by_id()
    origin, symbol = DATA.requests[0]["origin_chain_id"], DATA.requests[0]["currency_in_symbol"]
    for request_id in _listed(_page(http, origin=str(origin))):
        assert rows[request_id]["origin_chain_id"] == origin
    for request_id in _listed(_page(http, currency=str(symbol).lower())):
        row = rows[request_id]
        assert symbol in (row["currency_in_symbol"], row["currency_out_symbol"])
    start, end = BASE_TIME + timedelta(seconds=5), BASE_TIME + timedelta(seconds=7)
    shown = "%Y-%m-%dT%H:%M:%S"  # as a datetime-local field sends it
    window = _listed(_page(http, start=start.strftime(shown), end=end.strftime(shown)))
    expected = {row["id"] for row in DATA.requests if start <= row["created_at"] <= end}
    assert set(window) == expected and expected


def test_a_search_finds_a_transaction_and_an_address(http: httpx.Client) -> None:
    transaction = DATA.transactions[0]
    found = _page(http, q=transaction["tx_hash"].upper().replace("0X", "0x"))
    assert "Requests with the transaction hash" in found
    assert _listed(found) == [transaction["request_id"]]
    user = DATA.requests[0]["user_address"]
    mine = {row["id"] for row in DATA.requests if user in (row["user_address"], row["recipient"])}
    assert set(_listed(_page(http, q=user))) == mine


def test_a_search_that_names_nothing_says_so(http: httpx.Client) -> None:
    nothing = _page(http, q="0x" + "cd" * 32)
    assert "Requests with the transaction hash" in nothing
    assert "No request matches." in nothing
    assert _listed(nothing) == []


@pytest.mark.parametrize(
    ("path", "status", "said"),
    [
        ("/explorer/requests/0x" + "ab" * 32, 404, "There is no request"),
        ("/explorer/requests/0x12", 400, "request id must be"),
        ("/explorer/requests/0x" + "ab" * 32 + "/progress", 404, "There is no request"),
        ("/explorer?q=not-an-id", 400, "is not a request id, an order id"),
        ("/explorer?q=" + "0x" + "a" * 63, 400, "is not a request id"),
        ("/explorer?origin=one", 400, "Origin chain must be"),
        ("/explorer?destination=0", 400, "Destination chain must be a positive integer"),
        ("/explorer?status=finished", 400, "is not a request status"),
        ("/explorer?start=yesterday", 400, "must be a date and time"),
        ("/explorer?end=99999-01-01T00:00", 400, "must be a date and time"),
        ("/explorer?start=2999-12-31T23:59", 200, "No request matches."),
        ("/explorer?continuation=forged", 400, "continuation is not a cursor"),
        ("/explorer?currency=" + "X" * 300, 400, "Currency must be a symbol"),
        ("/explorer/nowhere", 404, "Not Found"),
        ("/explorer/operator/session", 405, "Method Not Allowed"),
    ],
)
def test_bad_input_is_a_clear_page_never_a_server_error(
    http: httpx.Client, path: str, status: int, said: str
) -> None:
    answer = http.get(path)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert said in answer.text


def test_without_an_operator_token_the_operator_view_is_off(tmp_path: Path) -> None:
    service = _start(tmp_path)
    try:
        answer = httpx.get(
            f"{service.base_url}/explorer/operator",
            headers={"Authorization": "Bearer anything"},
            timeout=10,
        )
    finally:
        service.stop()
    assert answer.status_code == 403
    assert "CROSSFILL_ADMIN_TOKEN" in answer.text
    assert "Solver balances" not in answer.text
