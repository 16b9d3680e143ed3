"""Transfers into the solver's exchange account in another currency than the withdrawal quoted:
a `spotSend` moves spot USDC, not the perps USDC a withdrawal from the perps DEX asked for, so
it pays for nothing and goes back in what it moved (the money invariant, run after the test,
reads its currency from the exchange's ledger)."""

from __future__ import annotations

import time
from decimal import Decimal

import httpx
from eth_account import Account
from eth_account.signers.local import LocalAccount

from crossfill.config import Deployment
from crossfill.devnet.exchange.process import ExchangeProcess, fund
from crossfill.devnet.exchange.tokens import USDC
from crossfill.kinds.perps.actions import SpotSend, sign_action
from crossfill.kinds.perps.config import PERPS_USDC_ADDRESS, perps_exchange
from tests.adversarial.cross_vm import PERPS_ID
from tests.adversarial.quote_seeds import route_body
from tests.conftest import RunningDevnet
from tests.e2e.bridging import ORIGIN, REFUNDED, final_status, request_quote, usdc
from tests.e2e.perps.conftest import exchange_info
from tests.support.service import StartService
from tests.support.wallets.perps import post_to_exchange, sign_authorization

NO_LIMITS = {"rate_limit_anonymous_per_minute": 0, "rate_limit_key_per_minute": 0}


def _spot_usdc(exchange: ExchangeProcess, user: str) -> Decimal:
    state = exchange_info(exchange, type="spotClearinghouseState", user=user)
    return sum((Decimal(b["total"]) for b in state["balances"] if b["coin"] == "USDC"), Decimal())


def test_a_spot_usdc_send_under_a_perps_withdrawals_nonce_is_refunded_in_spot_usdc(
    start_service: StartService,
    cross_vm_deployment: Deployment,
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
) -> None:
    service = start_service(cross_vm_deployment, run_workers=True, settings=NO_LIMITS)
    perps = perps_exchange(cross_vm_deployment)
    assert perps is not None
    user: LocalAccount = Account.create()
    fund(exchange.api_url, user.address, "100", "USDC")
    fund(exchange.api_url, user.address, "1")  # an exchange account of its own, with perps USD
    body = route_body((PERPS_ID, PERPS_USDC_ADDRESS), (ORIGIN, usdc(devnet, ORIGIN)),
                      25 * 10**6, user.address, user.address, protocolVersion="v2")  # fmt: skip
    with httpx.Client(base_url=service.base_url, timeout=20) as http:
        authorize, deposit = request_quote(http, body)["steps"]
        item = authorize["items"][0]
        post = item["data"]["post"]
        signature = sign_authorization(user, item, "eth-account")
        answer = http.post(post["endpoint"], params={"signature": signature}, json=post["body"])
        assert answer.status_code == 200, answer.text
        nonce = deposit["items"][0]["data"]["action"]["parameters"]["nonce"]
        # The quoted amount and nonce, but spot USDC by spotSend instead of the quoted
        # sendAsset from the perps DEX.
        spot = SpotSend(perps.exchange_chain, perps.signature_chain, perps.solver.address.lower(),
                        "25", token=USDC.wire_name, time=nonce)  # fmt: skip
        assert post_to_exchange(exchange, sign_action(spot, user).request_body())["status"] == "ok"
        assert _spot_usdc(exchange, user.address) == 75
        status = final_status(http, deposit["requestId"], until=REFUNDED | {"success"})
    assert status["status"] == "refund", status
    assert status["failReason"] == "INCORRECT_DEPOSIT_CURRENCY", status
    deadline = time.monotonic() + 20
    while _spot_usdc(exchange, user.address) != 100 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _spot_usdc(exchange, user.address) == 100
