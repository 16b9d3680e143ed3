"""POST /execute refuses bad input: each invalid field a 400 `{error}`, no key a 401, and the
authorizations checked against the chain (wrong authority, wrong chain, reused nonce)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount

from crossfill.devnet.anvil import set_native_balance
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    OPERATOR,
    OPERATOR_TOKEN,
    ORIGIN,
    new_api_key,
    request_quote,
    usdc,
)
from tests.e2e.gasless import (
    deploy_delegate,
    execute_body,
    origin_web3,
    quote_calls,
    signed_batch,
    sponsored_key,
    token_call,
    usdc_bridge_quote,
    user_with_usdc,
)
from tests.support.service import ServiceThread, StartService, service_settings
from tests.support.wallets.evm import send_item


@dataclass
class Setup:
    http: httpx.Client
    key: str
    user: LocalAccount
    body: dict[str, Any]
    devnet: RunningDevnet
    delegate: str


@pytest.fixture(scope="module")
def module_service(
    devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceThread]:
    settings = service_settings(
        tmp_path_factory.mktemp("execute"), devnet.deployment_path, admin_token=OPERATOR_TOKEN
    )
    service = ServiceThread(settings, devnet.deployment).start()
    yield service
    service.stop()


@pytest.fixture(scope="module")
def setup(module_service: ServiceThread, devnet: RunningDevnet) -> Iterator[Setup]:
    with httpx.Client(base_url=module_service.base_url, timeout=10) as http:
        key, _ = sponsored_key(http, devnet)
        delegate = deploy_delegate(devnet)
        user = user_with_usdc(devnet, 10_000_000)
        quote = usdc_bridge_quote(http, devnet, user.address, user.address, 5_000_000, key)
        batch = signed_batch(origin_web3(devnet), user, delegate, quote_calls(quote))
        body = execute_body(user.address, batch, quote["steps"][-1]["requestId"])
        yield Setup(http, key, user, body, devnet, delegate)


def _post(setup: Setup, body: dict[str, Any], key: str | None = "own") -> httpx.Response:
    headers = {} if key is None else {"x-api-key": setup.key if key == "own" else key}
    return setup.http.post("/execute", json=body, headers=headers)


def _changed(body: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """`body` with the dotted `path` set to `value` (a `-` value removes it)."""
    changed: Any = copy.deepcopy(body)
    *parents, last = path.split(".")
    node = changed
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value == "-":
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    result: dict[str, Any] = changed
    return result


BAD_FIELDS: list[tuple[str, Any, str]] = [
    ("executionKind", "permit", "executionKind"),
    ("executionKind", "-", "executionKind"),
    ("data.chainId", 0, "chainId"),
    ("data.chainId", "nine", "chainId"),
    ("data.chainId", 424242, "chainId"),
    ("data.to", "-", "to"),
    ("data.to", "0x1234", "data.to"),
    ("data.data", "0xabc", "data.data"),
    ("data.data", "calldata", "data.data"),
    ("data.value", "-1", "data.value"),
    ("data.value", "1.5", "data.value"),
    ("data.value", 5, "value"),
    ("data.value", "1", "data.value must be 0"),
    ("data.authorizationList.0.chainId", DESTINATION, "chainId must be 0 or"),
    ("data.authorizationList.0.chainId", "1", "chainId"),
    ("data.authorizationList.0.address", "0xnope", "address"),
    ("data.authorizationList.0.nonce", -1, "nonce"),
    ("data.authorizationList.0.yParity", 2, "yParity"),
    ("data.authorizationList.0.r", "0x", "r"),
    ("data.authorizationList.0.s", "0x" + "ff" * 32, "lower half"),
    ("data.authorizationList.0.s", "0x" + "ff" * 33, "s"),
    ("executionOptions.subsidizeFees", "yes", "subsidizeFees"),
    ("requestId", "0x12", "requestId"),
    ("unexpected", 1, "unexpected"),
]


@pytest.mark.parametrize(("path", "value", "named"), BAD_FIELDS)
def test_each_invalid_field_is_400_with_error(
    setup: Setup, path: str, value: Any, named: str
) -> None:
    answer = _post(setup, _changed(setup.body, path, value))
    assert answer.status_code == 400, answer.text
    assert named in answer.json()["error"]
    assert answer.json()["error"] == answer.json()["message"]


def test_no_key_is_401_and_a_wrong_key_401(setup: Setup) -> None:
    for key in (None, "not-a-key"):
        answer = _post(setup, setup.body, key)
        assert answer.status_code == 401
        assert "error" in answer.json()


def test_key_without_gas_sponsor_is_403(setup: Setup) -> None:
    setup.http.headers.update(OPERATOR)
    try:
        key = new_api_key(setup.http, "no-sponsor")
    finally:
        del setup.http.headers["Authorization"]
    answer = _post(setup, setup.body, key)
    assert answer.status_code == 403
    assert "sponsor" in answer.json()["error"]


def test_authorization_signed_by_another_account_is_400(setup: Setup) -> None:
    stranger = Account.create()
    batch = signed_batch(origin_web3(setup.devnet), stranger, setup.delegate, [])
    body = _changed(setup.body, "data.authorizationList.0", batch.authorization)
    answer = _post(setup, body)
    assert answer.status_code == 400
    assert "not by the called account" in answer.json()["error"]


def test_reused_authorization_nonce_is_400(setup: Setup) -> None:
    """The account has sent a transaction since it signed: its nonce 0 is used."""
    user = Account.create()
    web3 = origin_web3(setup.devnet)
    stale = signed_batch(web3, user, setup.delegate, [], account_nonce=0)
    set_native_balance(evm_chains(setup.devnet.deployment)[0].rpc_url, user.address, 10**18)
    send_item(web3, user, {"to": user.address, "data": "0x", "value": "0", "chainId": ORIGIN})
    body = _changed(setup.body, "data.to", user.address)
    body = _changed(body, "data.authorizationList.0", stale.authorization)
    answer = _post(setup, body)
    assert answer.status_code == 400
    assert "nonce is 0" in answer.json()["error"]


def test_authorization_ahead_of_the_account_nonce_is_400(setup: Setup) -> None:
    ahead = signed_batch(origin_web3(setup.devnet), setup.user, setup.delegate, [], account_nonce=7)
    answer = _post(setup, _changed(setup.body, "data.authorizationList.0", ahead.authorization))
    assert answer.status_code == 400
    assert "nonce is 7" in answer.json()["error"]


def test_unknown_request_is_404(setup: Setup) -> None:
    answer = _post(setup, _changed(setup.body, "requestId", "0x" + "ee" * 32))
    assert answer.status_code == 404
    assert "error" in answer.json()


@pytest.mark.parametrize(
    ("caps", "status", "named"),
    [
        ({"max_gas_per_request": 50_000}, 400, "one gasless request may use"),
        ({"max_spend_per_key_wei": 1}, 403, "gas sponsorship on chain"),
    ],
)
def test_sponsor_caps_refuse_what_would_pass_them(
    setup: Setup, start_service: StartService, caps: dict[str, int], status: int, named: str
) -> None:
    deployment = setup.devnet.deployment
    capped = deployment.model_copy(update={"gasless": deployment.gasless.model_copy(update=caps)})
    service = start_service(capped, settings={"admin_token": OPERATOR_TOKEN})
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key, _ = sponsored_key(http, setup.devnet)
        quote = usdc_bridge_quote(
            http, setup.devnet, setup.user.address, setup.user.address, 10**6, key
        )
        body = _changed(setup.body, "requestId", quote["steps"][-1]["requestId"])
        answer = http.post("/execute", json=body, headers={"x-api-key": key})
    assert answer.status_code == status, answer.text
    assert named in answer.json()["error"]


def test_a_call_the_sponsor_would_make_in_its_own_name_is_400(setup: Setup) -> None:
    """Without an authorization, only an account already delegated may be called: never a
    contract (a token's `transfer` would spend the sponsor's own funds) nor a plain account."""
    token = usdc(setup.devnet, ORIGIN)
    transfer = token_call(setup.devnet, "transfer", setup.user.address, 1)
    for target, data in ((token, "0x" + transfer["data"].hex()), (setup.user.address, "0x")):
        body = _changed(setup.body, "data.authorizationList", [])
        body = _changed(_changed(body, "data.to", target), "data.data", data)
        answer = _post(setup, body)
        assert answer.status_code == 400, answer.text
        assert "not an EIP-7702 delegated account" in answer.json()["error"]


def _keyless_quote(setup: Setup) -> dict[str, Any]:
    """A quote made without a key (as the official SDK makes it) for the setup's user."""
    body = {
        "user": setup.user.address,
        "recipient": setup.user.address,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": usdc(setup.devnet, ORIGIN),
        "destinationCurrency": usdc(setup.devnet, DESTINATION),
        "amount": str(10**6),
        "tradeType": "EXACT_INPUT",
    }
    return request_quote(setup.http, body)


def test_a_request_quoted_without_the_key_is_executed_for_its_users_paying_call(
    setup: Setup,
) -> None:
    """The SDK's flow: quoted without a key, executed with one; the call runs on the user's
    own account and pays the request, so only the user can have signed it."""
    quote = _keyless_quote(setup)
    request_id = quote["steps"][-1]["requestId"]
    batch = signed_batch(origin_web3(setup.devnet), setup.user, setup.delegate, quote_calls(quote))
    answer = _post(setup, execute_body(setup.user.address, batch, request_id))
    assert answer.status_code == 200, answer.text
    assert answer.json()["requestId"] == request_id


def test_a_call_of_the_user_that_pays_nothing_is_403_for_a_request_of_another_key(
    setup: Setup,
) -> None:
    """Signed by the user, but paying nothing: executed, it would fail the request."""
    quote = _keyless_quote(setup)
    request_id = quote["steps"][-1]["requestId"]
    empty = signed_batch(origin_web3(setup.devnet), setup.user, setup.delegate, [], batch_nonce=9)
    answer = _post(setup, execute_body(setup.user.address, empty, request_id))
    assert answer.status_code == 403, answer.text
    assert "not quoted with this API key" in answer.json()["error"]
