"""POST /authorize: a wallet's EIP-712 nonce mapping, stored once and read back by id."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store import nonce_mappings
from crossfill.store.tables import NonceMapping
from tests.e2e.bridging import native_bridge, request_quote
from tests.support.database import read
from tests.support.service import ServiceThread

TYPES = {
    "NonceMapping": [
        {"name": "chainId", "type": "string"},
        {"name": "wallet", "type": "address"},
        {"name": "depositor", "type": "address"},
        {"name": "id", "type": "bytes32"},
        {"name": "nonce", "type": "uint256"},
    ]
}
ZERO = "0x" + "00" * 20


def _body(wallet: LocalAccount, request_id: str, nonce: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": "nonce-mapping",
        "walletChainId": 1337,
        "wallet": wallet.address,
        "depositor": wallet.address,
        "nonce": nonce,
        "id": request_id,
        "signatureChainId": 900001,
        **fields,
    }


def _sign(
    wallet: LocalAccount, body: dict[str, Any], *, name: str = "CrossfillNonceMapping"
) -> str:
    """The wallet's signature, made with eth-account's own EIP-712 encoder."""
    signed = wallet.sign_typed_data(
        {
            "name": name,
            "version": "2",
            "chainId": body["signatureChainId"],
            "verifyingContract": ZERO,
        },
        TYPES,
        {
            "chainId": str(body["walletChainId"]),
            "wallet": body["wallet"],
            "depositor": body["depositor"],
            "id": bytes.fromhex(body["id"][2:]),
            "nonce": body["nonce"],
        },
    )
    return "0x" + bytes(signed.signature).hex()


def _mappings_of(service: ServiceThread, request_id: str) -> list[NonceMapping]:
    """The request's stored mappings, read back by its id through the store."""

    async def mappings(session: AsyncSession) -> list[NonceMapping]:
        return await nonce_mappings.of_request(session, request_id)

    return read(service.settings.database, mappings)


def _request_id(client: httpx.Client, user: str) -> str:
    quote = request_quote(client, native_bridge(user))
    request_id: str = quote["steps"][-1]["requestId"]
    return request_id


def _authorize(client: httpx.Client, body: dict[str, Any], signature: str) -> httpx.Response:
    return client.post("/authorize", params={"signature": signature}, json=body)


def test_mapping_is_stored_once_idempotent_and_conflicts_on_another_request(
    client: httpx.Client, service: ServiceThread
) -> None:
    wallet: LocalAccount = Account.create()
    first, second = _request_id(client, wallet.address), _request_id(client, wallet.address)
    body = _body(wallet, first, 7)
    stored = _authorize(client, body, _sign(wallet, body))
    assert stored.status_code == 200, stored.text
    again = _authorize(client, body, _sign(wallet, body))
    assert again.status_code == 200, again.text

    other = _body(wallet, second, 7)
    conflict = _authorize(client, other, _sign(wallet, other))
    assert conflict.status_code == 409, conflict.text
    assert conflict.json()["statusCode"] == 409

    (row,) = _mappings_of(service, first)
    assert (row.wallet, row.nonce, row.depositor) == (
        wallet.address.lower(),
        "7",
        wallet.address.lower(),
    )
    assert (row.wallet_chain_id, row.signature_chain_id) == (1337, 900001)
    assert _mappings_of(service, second) == []


def test_unknown_request_is_404(client: httpx.Client) -> None:
    wallet: LocalAccount = Account.create()
    body = _body(wallet, "0x" + "cd" * 32, 1)
    assert _authorize(client, body, _sign(wallet, body)).status_code == 404


BAD_BODIES: list[tuple[str, dict[str, Any]]] = [
    ("type", {"type": "something-else"}),
    ("walletChainId", {"walletChainId": 0}),
    ("wallet", {"wallet": "0x1234"}),
    ("depositor", {"depositor": "not an address"}),
    ("nonce", {"nonce": -1}),
    ("nonce", {"nonce": "1e3"}),
    ("id", {"id": "0x12"}),
    ("signatureChainId", {"signatureChainId": "x"}),
    ("unexpected", {"unexpected": 1}),
]


@pytest.mark.parametrize(("field", "change"), BAD_BODIES)
def test_each_invalid_field_is_400(
    client: httpx.Client, field: str, change: dict[str, Any]
) -> None:
    wallet: LocalAccount = Account.create()
    body = {**_body(wallet, "0x" + "ab" * 32, 1), **change}
    answer = _authorize(client, body, "0x" + "11" * 65)
    assert answer.status_code == 400, answer.text
    assert field in answer.json()["message"]


def test_bad_signatures_are_400(client: httpx.Client) -> None:
    wallet, stranger = Account.create(), Account.create()
    request_id = _request_id(client, wallet.address)
    body = _body(wallet, request_id, 3)
    cases = {
        "someone else's": _sign(stranger, {**body, "wallet": stranger.address}),
        "another domain": _sign(wallet, body, name="OtherNonceMapping"),
        "another nonce": _sign(wallet, {**body, "nonce": 4}),
        "malformed": "0x1234",
        "not recoverable": "0x" + "00" * 65,
    }
    for case, signature in cases.items():
        answer = _authorize(client, body, signature)
        assert answer.status_code == 400, (case, answer.text)
        assert "signature" in answer.json()["message"], case
    assert client.post("/authorize", json=body).status_code == 400
