"""Attacks through the API with valid requests: acting on another key's request, an
attestation of returned money, and hint floods that would spend the service's RPC budget."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from eth_account import Account
from prometheus_client.parser import text_string_to_metric_families

from crossfill.devnet.anvil import anvil_rpc
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    OPERATOR_TOKEN,
    ORIGIN,
    REFUNDED,
    deposit_usdc,
    final_status,
    funded_user,
    native_bridge,
    new_api_key,
    request_quote,
    rpc_urls,
)
from tests.e2e.gasless import (
    deploy_delegate,
    execute_body,
    origin_web3,
    signed_batch,
    sponsored_key,
    usdc_bridge_quote,
)
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

AMOUNT = 20_000_000


def _status(http: httpx.Client, request_id: str) -> str:
    answer = http.get("/intents/status/v3", params={"requestId": request_id})
    assert answer.status_code == 200, answer.text
    status: str = answer.json()["status"]
    return status


def test_a_key_cannot_execute_for_a_request_another_key_quoted(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    """Key B sends its own empty batch naming key A's waiting request: refused in the spec's
    `{error}` shape, the request still waiting, and A's later deposit filled as quoted."""
    service = start_service(run_workers=True, settings={"admin_token": OPERATOR_TOKEN})
    owner = funded_user(devnet, usdc_amount=AMOUNT)
    attacker = Account.create()
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        owner_key = new_api_key(http, "owner")
        attacker_key, _ = sponsored_key(http, devnet)
        recipient = Account.create().address
        quote = usdc_bridge_quote(http, devnet, owner.address, recipient, AMOUNT, owner_key)
        request_id = quote["steps"][-1]["requestId"]
        empty = signed_batch(origin_web3(devnet), attacker, deploy_delegate(devnet), [])
        answer = http.post(
            "/execute",
            json=execute_body(attacker.address, empty, request_id),
            headers={"x-api-key": attacker_key},
        )
        assert answer.status_code == 403, answer.text
        refusal = answer.json()
        assert refusal["statusCode"] == 403
        assert refusal["error"] == refusal["message"]
        assert request_id in refusal["error"]
        assert _status(http, request_id) == "waiting"

        deposit_usdc(devnet, owner, quote, AMOUNT)
        status = final_status(http, request_id, timeout=60)
    assert status["status"] == "success", status
    assert len(status["inTxHashes"]) == 1


def test_a_refunded_request_is_not_attested(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    """A deposit returned to its payer is no longer a payment: the attestation refuses it
    rather than sign the full origin amount a contract would take as paid."""
    service = start_service(run_workers=True)
    user = funded_user(devnet)
    # The Depository takes no plain ether: paying it as the recipient makes the fill revert.
    recipient = evm_chains(devnet.deployment)[1].contracts.depository
    body = native_bridge(user.address, recipient=recipient)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        request_id = quote["steps"][0]["requestId"]
        execute_steps(quote, user, rpc_urls(devnet))
        status = final_status(http, request_id, until=REFUNDED)
        answer = http.get(f"/requests/{request_id}/signature")
    assert status["status"] == "refund"
    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "REQUEST_REFUNDED"
    assert answer.json()["statusCode"] == 400
    assert "signature" not in answer.json()


# ---- hint floods -------------------------------------------------------------------------

HINT_CALLS = ("eth_getTransactionReceipt", "eth_getTransactionByHash", "eth_getTransactionCount")


def _rpc_calls(service: ServiceThread, chain_id: int) -> dict[str, float]:
    """The service's JSON-RPC calls to `chain_id` so far, by call (every outcome)."""
    scrape = httpx.get(f"{service.base_url}/metrics", timeout=10)
    assert scrape.status_code == 200, scrape.text
    calls: dict[str, float] = {}
    for family in text_string_to_metric_families(scrape.text):
        for sample in family.samples:
            if sample.name == "crossfill_rpc_calls_total" and sample.labels.get("chain_id") == str(
                chain_id
            ):
                call = sample.labels["call"]
                calls[call] = calls.get(call, 0.0) + sample.value
    return calls


@contextmanager
def _counted(service: ServiceThread, chain_id: int) -> Iterator[dict[str, float]]:
    """The RPC calls made inside, by call."""
    before = _rpc_calls(service, chain_id)
    spent: dict[str, float] = {}
    yield spent
    after = _rpc_calls(service, chain_id)
    spent.update({call: after[call] - before.get(call, 0.0) for call in after})


def _mining(devnet: RunningDevnet, seconds: float, every: float = 0.5) -> None:
    """New origin heads for `seconds`, as a live chain makes them."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        anvil_rpc(rpc_urls(devnet)[ORIGIN], "evm_mine", [])
        time.sleep(every)


def _client_at(service: ServiceThread, address: str) -> httpx.Client:
    """A client whose connections come from `address` (a loopback address of its own)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=service.base_url, timeout=10, transport=transport)


def _hint(http: httpx.Client, tx_hash: str) -> httpx.Response:
    return http.post("/transactions/index", json={"txHash": tx_hash, "chainId": str(ORIGIN)})


def _hint_calls(spent: dict[str, float]) -> float:
    return float(sum(spent.get(call, 0.0) for call in HINT_CALLS))


FLOOD = 200
WINDOW_SECONDS = 10.0
HINT_BUDGET = 60  # RPC calls per client per minute
# What a client may spend in a window: its budget, then what refills meanwhile.
REFILL = HINT_BUDGET * WINDOW_SECONDS / 60


def test_a_hint_flood_costs_a_bounded_number_of_rpc_calls(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    """200 anonymous hints of hashes no node knows, from one client: the RPC calls they cost
    stay within that client's budget and shrink as the lookups back off, and a real deposit
    hinted by another client meanwhile is indexed at once."""
    service = start_service(
        run_workers=True, settings={"hint_rpc_calls_per_client_per_minute": HINT_BUDGET}
    )
    with _counted(service, ORIGIN) as idle:
        _mining(devnet, WINDOW_SECONDS)
    flooder = _client_at(service, "127.0.0.2")
    honest = _client_at(service, "127.0.0.3")
    with flooder, honest:
        with _counted(service, ORIGIN) as flooded:
            for _ in range(FLOOD):
                assert _hint(flooder, "0x" + os.urandom(32).hex()).status_code == 200
            _mining(devnet, WINDOW_SECONDS)
        with _counted(service, ORIGIN) as later:
            _mining(devnet, WINDOW_SECONDS)

        user = funded_user(devnet)
        body = native_bridge(user.address, recipient=user.address, amount=str(10**16))
        quote = request_quote(honest, body)
        request_id = quote["steps"][0]["requestId"]
        (deposit_hash,) = execute_steps(quote, user, rpc_urls(devnet)).values()
        assert _hint(honest, deposit_hash).status_code == 200
        assert wait_for(lambda: _status(honest, request_id) != "waiting", timeout=5)
        status = final_status(honest, request_id)

    baseline = _hint_calls(idle)
    flood_cost = _hint_calls(flooded) - baseline
    later_cost = _hint_calls(later) - baseline
    # Unbounded, every hint is looked up at once and again at each new head (20 a window):
    # 2,199 calls in the first window were measured so.
    assert flood_cost <= HINT_BUDGET + REFILL + 10, (flooded, idle)
    assert later_cost <= REFILL + 10, (later, idle)
    # Nor do the hints cost other calls (heads read and scans run for them).
    total_growth = sum(flooded.values()) - sum(idle.values())
    assert total_growth <= 2 * (HINT_BUDGET + REFILL), (flooded, idle)
    assert status["status"] == "success", status
