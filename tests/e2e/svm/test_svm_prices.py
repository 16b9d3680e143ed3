"""POST /price for routes to and from the SVM chain: the same use case as the quote (planned and
checked the same way), answered as fees and details only, and nothing stored."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from solders.keypair import Keypair
from sqlalchemy import func, select

from crossfill.config import Deployment
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.store.tables import Request
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, request_quote, stored_rows
from tests.support.service import StartService
from tests.support.waiting import wait_for

SVM_ID = 792703809
SOL = "1" * 32


def _price(http: httpx.Client, body: dict[str, Any]) -> httpx.Response:
    answers: list[httpx.Response] = []

    def answered() -> bool:
        answers.append(http.post("/price", json=body))
        return answers[-1].status_code != 503

    assert wait_for(answered, timeout=10)
    return answers[-1]


def _bodies() -> list[dict[str, Any]]:
    evm_user = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
    svm_user = str(svm_accounts.users()[0].pubkey())
    return [
        {
            "user": evm_user, "originChainId": ORIGIN, "destinationChainId": SVM_ID,
            "originCurrency": NATIVE, "destinationCurrency": SOL, "amount": str(10**17),
            "tradeType": "EXACT_INPUT", "recipient": str(Keypair().pubkey()),
        },
        {
            "user": svm_user, "originChainId": SVM_ID, "destinationChainId": DESTINATION,
            "originCurrency": SOL, "destinationCurrency": NATIVE, "amount": str(2 * 10**9),
            "tradeType": "EXACT_INPUT", "recipient": Account.create().address,
        },
    ]  # fmt: skip


def test_price_answers_svm_routes_as_their_quotes_do(
    start_service: StartService, svm_deployment: Deployment
) -> None:
    service = start_service(svm_deployment)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        for body in _bodies():
            price = _price(http, body)
            assert price.status_code == 200, price.text
            priced = price.json()
            assert set(priced) == {"fees", "details"}
            stored_before = stored_rows(service, select(func.count()).select_from(Request))
            quote = request_quote(http, body)
            stored_after = stored_rows(service, select(func.count()).select_from(Request))
            assert stored_after == [stored_before[0] + 1]  # the quote stored; the price not
            assert priced["fees"] == quote["fees"]
            details = priced["details"]
            assert details == quote["details"]
            assert details["currencyIn"]["currency"]["chainId"] == body["originChainId"]
            assert details["currencyOut"]["currency"]["chainId"] == body["destinationChainId"]
            assert int(details["currencyOut"]["amount"]) > 0


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"recipient": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}, "INVALID_RECIPIENT"),
        (
            {"destinationCurrency": "So11111111111111111111111111111111111111112"},
            "UNSUPPORTED_CURRENCY",
        ),
    ],
)
def test_price_refuses_what_the_svm_quote_refuses(
    start_service: StartService,
    svm_deployment: Deployment,
    changes: dict[str, str],
    code: str,
) -> None:
    service = start_service(svm_deployment)
    body = {**_bodies()[0], **changes}
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        price = _price(http, body)
        quote = http.post("/quote/v2", json=body)
    assert price.status_code == quote.status_code == 400, price.text
    assert price.json() == quote.json()
    assert price.json()["errorCode"] == code
