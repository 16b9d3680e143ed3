"""POST /execute/permits: only the quoting user's signature over the quoted authorization is
accepted; everything else is a clear 4xx, checked before anything is sent on chain."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account

from crossfill.domain.deposit_authorization import DepositAuthorization
from tests.e2e.bridging import ORIGIN, native_bridge, request_quote, usdc
from tests.e2e.conftest import validate_against
from tests.support.service import ServiceThread, StartService


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service()  # no workers: what is accepted stays queued


def _authorization(devnet: Any, quote: dict[str, Any]) -> DepositAuthorization:
    sign = quote["steps"][0]["items"][0]["data"]["sign"]
    value = sign["value"]
    return DepositAuthorization(
        chain_id=sign["domain"]["chainId"],
        token=sign["domain"]["verifyingContract"],
        token_name=sign["domain"]["name"],
        depositor=value["from"],
        depository=value["to"],
        amount=int(value["value"]),
        valid_after=int(value["validAfter"]),
        valid_before=int(value["validBefore"]),
        order_id=value["nonce"],
    )


def _post(http: httpx.Client, request_id: str, signature: bytes | str, kind: str = "eip3009"):
    shown = signature if isinstance(signature, str) else "0x" + signature.hex()
    return http.post(
        "/execute/permits",
        params={"signature": shown},
        json={"kind": kind, "requestId": request_id, "api": "bridge", "referrer": "e2e"},
    )


def test_only_the_user_s_signature_over_the_quote_is_accepted(service, devnet) -> None:
    user, stranger = Account.create(), Account.create()
    token = usdc(devnet, ORIGIN)
    body = native_bridge(user.address, originCurrency=token, amount="20000000", usePermit=True)
    body["destinationCurrency"] = usdc(devnet, 900002)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        validate_against("quote", quote)
        request_id = quote["steps"][0]["requestId"]
        authorization = _authorization(devnet, quote)
        good = authorization.sign(bytes(user.key))

        for refused, code in (
            (_post(http, request_id, authorization.sign(bytes(stranger.key))), 400),
            (_post(http, request_id, "0x1234"), 400),
            (_post(http, request_id, good, kind="eip2612"), 400),
            (_post(http, "0x" + "ab" * 32, good), 404),
        ):
            assert refused.status_code == code, refused.text
            assert refused.json()["statusCode"] == code and refused.json()["message"]
        assert (
            _post(http, request_id, authorization.sign(bytes(stranger.key))).json()["errorCode"]
            == "INVALID_SIGNATURE"
        )

        accepted = _post(http, request_id, good)
        assert accepted.status_code == 200, accepted.text
        assert accepted.json()["requestId"] == request_id
        assert _post(http, request_id, good).status_code == 200  # the same again: accepted
        # A quote made without usePermit takes no authorization.
        plain = request_quote(http, native_bridge(user.address))
        not_permit = _post(http, plain["steps"][0]["requestId"], good)
        assert not_permit.status_code == 400 and "usePermit" in not_permit.json()["message"]
