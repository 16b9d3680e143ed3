"""The explorer in a real browser (Debian's headless Chromium) against the service on the
devnet: a bridge's page moving to success live, the search box finding a request by each key,
a refunded request's reason, the operator's view behind the operator token, and bad input
answered with a clear page. (The list's filters and paging, and the rest of its bad input,
over many stored requests: tests/integration/explorer.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from crossfill.config import Deployment
from crossfill.config.explorer import ExplorerConfig
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet, running_in_ci
from tests.e2e.bridging import (
    OPERATOR,
    OPERATOR_TOKEN,
    ORIGIN,
    REFUNDED,
    deposit_native,
    final_status,
    funded_user,
    native_bridge,
    quote_request_id,
    request_quote,
    rpc_urls,
)
from tests.support.browser import PHONE, BrowserMissing, chromium
from tests.support.service import ServiceThread, service_settings
from tests.support.wallets.evm import execute_steps

# The origin chain links to a block explorer; the destination, like the devnet's, to none.
EXPLORER_URL = "https://origin-explorer.example"
LIVE_TIMEOUT_MS = 40_000


def _with_origin_explorer(deployment: Deployment) -> Deployment:
    chains = tuple(
        chain.model_copy(update={"explorer": ExplorerConfig(url=EXPLORER_URL, name="Origin")})
        if chain.id == ORIGIN
        else chain
        for chain in evm_chains(deployment)
    )
    return deployment.model_copy(update={"chains": chains})


@pytest.fixture(scope="module")
def service(
    devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceThread]:
    """One service with its workers for the module's tests, the operator token set."""
    home = tmp_path_factory.mktemp("explorer")
    settings = service_settings(home, devnet.deployment_path, admin_token=OPERATOR_TOKEN)
    started = ServiceThread(
        settings, _with_origin_explorer(devnet.deployment), run_workers=True
    ).start()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    try:
        with chromium() as launched:
            yield launched
    except BrowserMissing as exc:
        if running_in_ci():
            pytest.fail(str(exc))
        pytest.skip(str(exc))


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    yield opened
    context.close()


@pytest.fixture
def http(service: ServiceThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=10) as client:
        yield client


@dataclass(frozen=True)
class Filled:
    request_id: str
    order_id: str
    deposit_tx: str
    user: str


@pytest.fixture(scope="module")
def filled(service: ServiceThread, devnet: RunningDevnet) -> Filled:
    """A bridge filled through the API, as a wallet would do it."""
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address))
        deposit = execute_steps(quote, user, rpc_urls(devnet))["deposit"]
        final_status(http, quote_request_id(quote), until=frozenset({"success"}))
    order_id = quote["protocol"]["v2"]["orderId"]
    return Filled(quote_request_id(quote), order_id, deposit, user.address)


def _status(page: Page) -> Any:
    return page.locator("#progress .current .status")


def test_a_bridge_moves_to_success_live_on_its_page(
    service: ServiceThread, devnet: RunningDevnet, http: httpx.Client, page: Page
) -> None:
    user = funded_user(devnet)
    quote = request_quote(http, native_bridge(user.address))
    request_id = quote_request_id(quote)
    page.goto(f"{service.base_url}/explorer/requests/{request_id}")
    expect(_status(page)).to_have_text("waiting")
    expect(page.locator("[data-live-state]")).to_have_text("updates live")
    page.evaluate("window.sameDocument = true")  # gone if the page were loaded again

    deposit = execute_steps(quote, user, rpc_urls(devnet))["deposit"]
    expect(_status(page)).to_have_text("success", timeout=LIVE_TIMEOUT_MS)

    assert page.evaluate("window.sameDocument") is True
    expect(page.locator("[data-live-state]")).to_have_text("final")
    steps = page.locator("ol.timeline .step").all_inner_texts()
    assert steps == ["quoted", "deposit seen", "deposit confirmed", "fill sent", "fill mined"]
    # Each step after the first says how long it took.
    assert page.locator("ol.timeline .took").count() == len(steps) - 1
    # The deposit links to the origin's block explorer; the fill, on a chain without one,
    # shows its hash unlinked.
    deposit_link = page.locator(f'a[href="{EXPLORER_URL}/tx/{deposit}"]')
    expect(deposit_link.first).to_have_text(deposit)
    (fill,) = http.get("/intents/status/v3", params={"requestId": request_id}).json()["txHashes"]
    expect(page.locator("code.hash", has_text=fill).first).to_be_visible()
    assert page.locator(f'a:has-text("{fill}")').count() == 0
    # Fees quoted beside actual, the request now ended.
    fees = page.get_by_role("table", name=re.compile("^Fees quoted and actual")).locator("tbody tr")
    expect(fees).to_have_count(5)
    expect(fees.filter(has_text="execution")).not_to_contain_text("not yet")


def _search(page: Page, base_url: str, term: str) -> None:
    page.goto(f"{base_url}/explorer")
    page.get_by_label("Search by request id, order id, transaction hash or address").fill(term)
    with page.expect_navigation():
        page.keyboard.press("Enter")


@pytest.mark.parametrize("key", ["request id", "order id"])
def test_a_search_for_a_request_or_order_id_opens_the_request(
    service: ServiceThread, filled: Filled, page: Page, key: str
) -> None:
    _search(page, service.base_url, filled.request_id if key == "request id" else filled.order_id)
    assert page.url == f"{service.base_url}/explorer/requests/{filled.request_id}"
    expect(page.locator("h1")).to_contain_text(filled.request_id)
    expect(_status(page)).to_have_text("success")


@pytest.mark.parametrize("key", ["transaction hash", "address"])
def test_a_search_for_a_transaction_or_address_lists_its_requests(
    service: ServiceThread, filled: Filled, page: Page, key: str
) -> None:
    term = filled.deposit_tx if key == "transaction hash" else filled.user
    _search(page, service.base_url, term)
    expect(page.get_by_role("status")).to_contain_text(f"Requests with the {key}")
    rows = page.locator("table.cards tbody tr")
    expect(rows).to_have_count(1)
    rows.get_by_role("link").click()
    expect(page.locator("h1")).to_contain_text(filled.request_id)


def test_a_refunded_request_says_why_in_words_and_by_code(
    service: ServiceThread, devnet: RunningDevnet, http: httpx.Client, page: Page
) -> None:
    user = funded_user(devnet)
    quote = request_quote(http, native_bridge(user.address))
    short = int(quote["details"]["currencyIn"]["amount"]) - 1000
    deposit_native(devnet, user, quote, short)
    request_id = quote_request_id(quote)
    final_status(http, request_id, until=REFUNDED)

    page.goto(f"{service.base_url}/explorer/requests/{request_id}")
    expect(_status(page)).to_have_text("refund")
    reason = page.locator("ul.reasons li")
    expect(reason).to_contain_text("The deposit was smaller than the quote asked for")
    expect(reason.locator("code")).to_have_text("DEPOSITED_AMOUNT_TOO_LOW_TO_FILL")
    steps = page.locator("ol.timeline .step").all_inner_texts()
    assert steps[-2:] == ["refund sent", "refund mined"]


def test_the_operator_view_needs_the_operator_token(
    service: ServiceThread, devnet: RunningDevnet, http: httpx.Client, page: Page
) -> None:
    refused = http.get("/explorer/operator")
    assert refused.status_code == 401
    assert "text/html" in refused.headers["content-type"]
    assert "Operator token" in refused.text and "Solver balances" not in refused.text
    assert http.get("/explorer/operator", headers=OPERATOR).status_code == 200

    page.goto(f"{service.base_url}/explorer/operator")
    page.get_by_label("Operator token").fill("not-the-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("That is not the operator token")
    expect(page.get_by_text("Solver balances")).to_have_count(0)

    page.get_by_label("Operator token").fill(OPERATOR_TOKEN)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Solver balances")).to_be_visible()
    chains = page.get_by_role("table", name=re.compile("readiness check")).locator("tbody tr")
    expect(chains).to_have_count(len(devnet.deployment.listed_chains))
    expect(chains.first).to_contain_text("ok")
    balances = page.get_by_role("table", name=re.compile("solver's balances"))
    expect(balances).to_contain_text("ETH")
    expect(page.get_by_role("heading", name="Queues")).to_be_visible()
    expect(page.get_by_role("heading", name="Webhook failures")).to_be_visible()

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Operator token")).to_be_visible()
    expect(page.get_by_text("Solver balances")).to_have_count(0)


def test_an_unknown_request_is_a_clear_page_never_a_server_error(http: httpx.Client) -> None:
    for path, status, said in (
        ("/explorer/requests/0x" + "ab" * 32, 404, "There is no request"),
        ("/explorer/requests/0x12", 400, "request id must be"),
    ):
        answer = http.get(path)
        assert answer.status_code == status, answer.text
        assert "text/html" in answer.headers["content-type"]
        assert said in answer.text


def test_every_input_has_a_label_and_the_keyboard_reaches_the_content(
    service: ServiceThread, page: Page
) -> None:
    page.goto(f"{service.base_url}/explorer?status=success")
    unlabelled = page.evaluate(
        "[...document.querySelectorAll('input, select')]"
        ".filter(field => field.labels.length === 0).map(field => field.name)"
    )
    assert unlabelled == []
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to content")
    page.keyboard.press("Enter")
    expect(page.locator(":focus")).to_have_attribute("id", "content")
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_attribute("id", "q")


def test_the_pages_fit_a_phone(service: ServiceThread, filled: Filled, browser: Browser) -> None:
    context = browser.new_context(viewport=PHONE)
    phone = context.new_page()
    try:
        for path in ("/explorer", f"/explorer/requests/{filled.request_id}"):
            phone.goto(f"{service.base_url}{path}")
            overflow = phone.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, path
    finally:
        context.close()
