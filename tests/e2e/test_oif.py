"""The Open Intents Framework's endpoints on the devnet, through the real service: a quote
whose amounts are the native /quote/v2's for the same trade; its order signed by the user with
eth-account from the typed data as given, submitted, opened by the key's gas sponsor and filled
(`finalized` on OIF's status, `success` on /intents/status/v3); and what a client may send wrong,
each a 4xx in OIF's error shape."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema
import pytest
from eth_abi.abi import decode, encode
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    OPERATOR_TOKEN,
    ORIGIN,
    balance,
    funded_user,
    new_api_key,
    request_quote,
    usdc,
)
from tests.e2e.gasless import sponsored_key
from tests.support.erc7683 import erc7683_request_id
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

USDC = 10**6
AMOUNT = 40 * USDC
QUOTES, ORDERS = "/oif/v1/quotes", "/oif/v1/orders"
# What a wallet signs of an order's payload (eth_signTypedData_v4's four fields).
TYPED_DATA = ("domain", "types", "primaryType", "message")


def interop(chain_id: int, address: str) -> str:
    """ERC-7930 (version 1, eip155), written out here byte by byte."""
    reference = chain_id.to_bytes((chain_id.bit_length() + 7) // 8, "big")
    raw = b"\x00\x01\x00\x00" + bytes([len(reference)]) + reference + b"\x14"
    return "0x" + (raw + bytes.fromhex(address[2:])).hex()


def quote_body(devnet: RunningDevnet, user: str, receiver: str, **intent: Any) -> dict[str, Any]:
    return {
        "user": interop(ORIGIN, user),
        "intent": {
            "intentType": "oif-swap",
            "inputs": [
                {
                    "user": interop(ORIGIN, user),
                    "asset": interop(ORIGIN, usdc(devnet, ORIGIN)),
                    "amount": str(AMOUNT),
                }
            ],
            "outputs": [
                {
                    "receiver": interop(DESTINATION, receiver),
                    "asset": interop(DESTINATION, usdc(devnet, DESTINATION)),
                }
            ],
            "swapType": "exact-input",
            "originSubmission": {"mode": "protocol"},
            **intent,
        },
        "supportedTypes": ["oif-escrow-v0"],
    }


def _oif_quote(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    answers: list[httpx.Response] = []

    def answered() -> bool:
        answers.append(http.post(QUOTES, json=body))
        return answers[-1].status_code != 503

    assert wait_for(answered, timeout=10)
    assert answers[-1].status_code == 200, answers[-1].text
    (quote,) = answers[-1].json()["quotes"]
    return dict(quote)


def _settler_calls(
    devnet: RunningDevnet, order_id: str, message: dict[str, Any]
) -> list[dict[str, str]]:
    """The destination calls an opened order's fill makes (approve the settler, `fill`), as a
    /quote/v2 client writes `txs`."""
    (fields,) = decode(
        ["(address,uint256,uint256,address,address,uint256,address)"],
        bytes.fromhex(message["orderData"][2:]),
    )
    _token_in, _amount_in, chain_id, settler, token_out, amount_out, recipient = fields
    settler, token_out = Web3.to_checksum_address(settler), Web3.to_checksum_address(token_out)
    origin_data = encode(
        ["address", "uint256", "address", "uint256", "uint32"],
        [token_out, amount_out, recipient, chain_id, int(message["fillDeadline"])],
    )
    destination = evm_chains(devnet.deployment)[1]
    web3 = signing_web3(destination.rpc_url, Account.create())
    token = contract_at(web3, "TestUSDC", token_out)
    destination_settler = contract_at(web3, "CrossfillDestinationSettler", settler)
    return [
        {"to": token_out, "value": "0", "data": token.encode_abi("approve", [settler, amount_out])},
        {
            "to": settler,
            "value": "0",
            "data": destination_settler.encode_abi(
                "fill", [bytes.fromhex(order_id[2:]), origin_data, b""]
            ),
        },
    ]


def _check_documented(http: httpx.Client, method: str, path: str, answer: dict[str, Any]) -> None:
    """`answer` is what /openapi.json documents as the path's 200 (its models' `$ref`s)."""
    document = http.get("/openapi.json").json()
    schema = document["paths"][path][method]["responses"]["200"]["content"]["application/json"]
    root = {**schema["schema"], "components": document["components"]}
    jsonschema.Draft202012Validator(root).validate(answer)


def _approve_settler(devnet: RunningDevnet, user: LocalAccount, spender: str) -> None:
    holder = signing_web3(evm_chains(devnet.deployment)[0].rpc_url, user)
    send(
        holder,
        contract_at(holder, "TestUSDC", usdc(devnet, ORIGIN)).functions.approve(spender, AMOUNT),
    )


def _oif_status(http: httpx.Client, order_id: str) -> str:
    answer = http.get(f"{ORDERS}/{order_id}")
    return (
        str(answer.json()["status"]) if answer.status_code == 200 else f"HTTP {answer.status_code}"
    )


def test_an_oif_order_is_quoted_as_natively_signed_submitted_and_filled(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service = start_service(run_workers=True, settings={"admin_token": OPERATOR_TOKEN})
    user = funded_user(devnet, usdc_amount=AMOUNT)
    receiver = Account.create().address
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key, _ = sponsored_key(http, devnet)
        quote = _oif_quote(http, quote_body(devnet, user.address, receiver))
        payload, metadata = quote["order"]["payload"], quote["metadata"]
        order_id = quote["quoteId"]
        native = request_quote(
            http,
            {
                "user": user.address,
                "recipient": receiver,
                "refundTo": user.address,
                "originChainId": ORIGIN,
                "destinationChainId": DESTINATION,
                "originCurrency": usdc(devnet, ORIGIN),
                "destinationCurrency": usdc(devnet, DESTINATION),
                "amount": str(AMOUNT),
                "tradeType": "EXACT_INPUT",
                "txs": _settler_calls(devnet, order_id, payload["message"]),
            },
        )
        # The same trade, the same amounts: the engine priced both.
        (given,), (wanted,) = quote["preview"]["inputs"], quote["preview"]["outputs"]
        assert given["amount"] == native["details"]["currencyIn"]["amount"] == str(AMOUNT)
        assert wanted["amount"] == native["details"]["currencyOut"]["amount"]
        assert wanted["asset"] == interop(DESTINATION, usdc(devnet, DESTINATION))
        floor = int(metadata["minOutputAmount"])
        assert int(wanted["amount"]) * 0.99 < floor <= int(wanted["amount"])
        assert quote["order"]["type"] == "oif-escrow-v0"
        (allowance,) = metadata["allowances"]
        assert allowance["spender"] == interop(ORIGIN, payload["domain"]["verifyingContract"])
        assert allowance["required"] == str(AMOUNT)

        # The wallet: approve the settler, sign the typed data exactly as quoted.
        typed = {name: payload[name] for name in TYPED_DATA}
        signature = Account.sign_typed_data(user.key, full_message=typed).signature
        order = {
            "order": quote["order"],
            "signature": "0x" + bytes(signature).hex(),
            "quoteId": order_id,
        }
        assert http.post(ORDERS, json=order).status_code == 401  # the sponsor is the key's
        # Not approved yet: its opening would revert, so it is not sent.
        early = http.post(ORDERS, json=order, headers={"x-api-key": key})
        assert early.status_code == 422 and early.json()["error"] == "ORDER_NOT_OPENABLE", (
            early.text
        )
        _approve_settler(devnet, user, payload["domain"]["verifyingContract"])
        answer = http.post(ORDERS, json=order, headers={"x-api-key": key})
        assert answer.status_code == 200, answer.text
        assert answer.json()["orderId"] == order_id and answer.json()["status"] == "received"
        again = http.post(ORDERS, json=order, headers={"x-api-key": key})
        assert again.status_code == 409 and again.json()["error"] == "CONFLICT", again.text

        request_id = erc7683_request_id(order_id)
        assert wait_for(
            lambda: _oif_status(http, order_id) == "finalized", timeout=45, interval=0.5
        ), _oif_status(http, order_id)
        native_status = http.get("/intents/status/v3", params={"requestId": request_id}).json()
        detail = http.get(f"{ORDERS}/{order_id}").json()

        _check_documented(http, "post", QUOTES, {"quotes": [quote]})
        _check_documented(http, "post", ORDERS, answer.json())
        _check_documented(http, "get", ORDERS + "/{id}", detail)

    assert native_status["status"] == "success", native_status
    assert detail["id"] == order_id and detail["quoteId"] == order_id
    assert detail["inputAmounts"] == [
        {"asset": interop(ORIGIN, usdc(devnet, ORIGIN)), "amount": str(AMOUNT)}
    ]
    assert detail["settlement"]["type"] == "escrow"
    assert detail["settlement"]["data"]["requestId"] == request_id
    assert detail["settlement"]["data"]["openTransactions"] == native_status["inTxHashes"]
    assert detail["fillTransaction"]["hash"] == native_status["txHashes"][-1]
    assert detail["createdAt"] <= detail["updatedAt"]
    # The user paid the input and no gas for the opening; the receiver got at least the floor.
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) == 0
    assert balance(devnet, DESTINATION, usdc(devnet, DESTINATION), receiver) >= floor


@pytest.fixture
def bare_service(start_service: StartService) -> ServiceThread:
    return start_service(settings={"admin_token": OPERATOR_TOKEN})


def _bad_quotes(devnet: RunningDevnet) -> list[tuple[str, Any, int, str | None]]:
    user, receiver = Account.create().address, Account.create().address

    def body(**intent: Any) -> dict[str, Any]:
        return quote_body(devnet, user, receiver, **intent)

    malformed_user = {**body(), "user": "0x" + user[2:]}
    bip122 = body()
    bip122["intent"]["inputs"][0]["asset"] = "0x00010001010114" + "11" * 20
    unknown_chain = body()
    unknown_chain["intent"]["outputs"][0] = {
        "receiver": interop(77777, receiver),
        "asset": interop(77777, usdc(devnet, DESTINATION)),
    }
    compact = body()
    compact["intent"]["inputs"][0]["lock"] = {"kind": "the-compact"}
    mystery_lock = body()
    mystery_lock["intent"]["inputs"][0]["lock"] = {"kind": "mystery"}
    native_in = body()
    native_in["intent"]["inputs"][0]["asset"] = interop(ORIGIN, "0x" + "00" * 20)
    no_amount = body()
    del no_amount["intent"]["inputs"][0]["amount"]
    return [
        ("malformed user", malformed_user, 400, "INVALID_REQUEST"),
        ("not an eip155 address", bip122, 400, "INVALID_ADDRESS"),
        ("unknown chain", unknown_chain, 422, "UNSUPPORTED_CHAIN"),
        ("native input", native_in, 422, "UNSUPPORTED_ASSET"),
        ("a lock", compact, 422, "UNSUPPORTED_LOCK_TYPE"),
        ("an unknown lock", mystery_lock, 400, "INVALID_REQUEST"),
        (
            "only resource locks",
            {**body(), "supportedTypes": ["oif-resource-lock-v0"]},
            422,
            "UNSUPPORTED_ORDER_TYPE",
        ),
        ("exact output", body(swapType="exact-output"), 422, "UNSUPPORTED_SWAP_TYPE"),
        ("no amount", no_amount, 400, "INVALID_REQUEST"),
        (
            "an amount as a number",
            {
                **body(),
                "intent": {
                    **body()["intent"],
                    "inputs": [{**body()["intent"]["inputs"][0], "amount": 5}],
                },
            },
            400,
            "INVALID_REQUEST",
        ),
        ("two outputs", body(outputs=body()["intent"]["outputs"] * 2), 422, "UNSUPPORTED_INTENT"),
        ("not the intent type", body(intentType="oif-bridge"), 400, "INVALID_REQUEST"),
        (
            "more than it buys",
            body(outputs=[{**body()["intent"]["outputs"][0], "amount": str(2 * AMOUNT)}]),
            422,
            "INSUFFICIENT_OUTPUT",
        ),
        ("valid too long", body(minValidUntil=2**32 - 1), 422, "UNSUPPORTED_VALIDITY"),
        ("a list", [1, 2], 400, "INVALID_REQUEST"),
    ]


def _assert_oif_error(answer: httpx.Response, status: int, code: str | None) -> None:
    assert answer.status_code == status, answer.text
    error = answer.json()
    assert isinstance(error["error"], str) and isinstance(error["message"], str), error
    assert "statusCode" not in error
    if code is not None:
        assert error["error"] == code, error


def test_what_a_client_sends_wrong_is_a_4xx_in_oifs_error_shape(
    bare_service: ServiceThread, devnet: RunningDevnet
) -> None:
    with httpx.Client(base_url=bare_service.base_url, timeout=10) as http:
        key = new_api_key(http, "oif")
        user = Account.create()
        valid = _oif_quote(http, quote_body(devnet, user.address, Account.create().address))
        for why, body, status, code in _bad_quotes(devnet):
            answer = http.post(QUOTES, json=body)
            assert answer.status_code == status, (why, answer.text)
            _assert_oif_error(answer, status, code)
        _assert_oif_error(
            http.post(QUOTES, content=b"{not json", headers={"content-type": "application/json"}),
            400,
            "INVALID_REQUEST",
        )
        oversize = b'{"user": "' + b"0" * 300_000 + b'"}'
        _assert_oif_error(
            http.post(QUOTES, content=oversize, headers={"content-type": "application/json"}),
            413,
            "REQUEST_TOO_LARGE",
        )
        _assert_oif_error(http.get(QUOTES), 405, "METHOD_NOT_ALLOWED")
        _assert_oif_error(http.get(f"{ORDERS}/0x1234"), 400, "INVALID_ORDER_ID")
        _assert_oif_error(http.get(f"{ORDERS}/0x{'ab' * 32}"), 404, "NOT_FOUND")
        _assert_oif_error(http.get("/oif/v1/nowhere"), 404, None)

        # Orders: another type, another signer, a payload that is not Crossfill's order.
        signed_by_other = Account.sign_typed_data(
            Account.create().key,
            full_message={name: valid["order"]["payload"][name] for name in TYPED_DATA},
        ).signature
        other = {"order": valid["order"], "signature": "0x" + bytes(signed_by_other).hex()}
        permit2 = {
            "order": {
                "type": "oif-escrow-v0",
                "payload": {
                    **valid["order"]["payload"],
                    "primaryType": "PermitBatchWitnessTransferFrom",
                },
            },
            "signature": other["signature"],
        }
        attempts = [
            (
                {**other, "order": {**valid["order"], "type": "oif-resource-lock-v0"}},
                422,
                "UNSUPPORTED_ORDER_TYPE",
            ),
            (
                {**other, "order": {**valid["order"], "type": "oif-mystery-v9"}},
                400,
                "INVALID_REQUEST",
            ),
            (other, 422, "INVALID_SIGNATURE"),
            ({**other, "signature": "0xzz"}, 400, "INVALID_SIGNATURE"),
            ({**other, "signature": [300]}, 400, "INVALID_SIGNATURE"),
            (permit2, 422, "INVALID_ORDER"),
            ({"signature": "0x00"}, 400, "INVALID_REQUEST"),
        ]
        for body, status, code in attempts:
            _assert_oif_error(
                http.post(ORDERS, json=body, headers={"x-api-key": key}), status, code
            )
        _assert_oif_error(
            http.post(ORDERS, json=other, headers={"x-api-key": "wrong"}), 401, "UNAUTHORIZED"
        )
        # Signed by its user, but the key has no gas sponsor to open it with.
        signed = Account.sign_typed_data(
            user.key,
            full_message={name: valid["order"]["payload"][name] for name in TYPED_DATA},
        ).signature
        own = {"order": valid["order"], "signature": "0x" + bytes(signed).hex()}
        _assert_oif_error(http.post(ORDERS, json=own, headers={"x-api-key": key}), 403, "FORBIDDEN")
