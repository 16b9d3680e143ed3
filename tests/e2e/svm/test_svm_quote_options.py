"""Quote body options on SVM routes over HTTP: one not served is refused in the quote error
shape with its errorCode (the full table is `tests/unit/test_svm_quotes.py`); served ones do
what they say (`includeProtocolData` signs the stated order, `fixedRate` is the whole fee)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.messages import encode_defunct
from solders.keypair import Keypair

from crossfill.devnet.svm import accounts as svm_accounts
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, request_quote
from tests.e2e.conftest import validate_against

SVM_ID = 792703809
SOL = "1" * 32
EVM_USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"


def _from_svm(**more: Any) -> dict[str, Any]:
    return {
        "user": str(svm_accounts.users()[0].pubkey()), "originChainId": SVM_ID,
        "destinationChainId": DESTINATION, "originCurrency": SOL, "destinationCurrency": NATIVE,
        "amount": str(10**9), "tradeType": "EXACT_INPUT", "recipient": EVM_USER, **more,
    }  # fmt: skip


def _to_svm(**more: Any) -> dict[str, Any]:
    return {
        "user": EVM_USER, "originChainId": ORIGIN, "destinationChainId": SVM_ID,
        "originCurrency": NATIVE, "destinationCurrency": SOL, "amount": str(10**17),
        "tradeType": "EXACT_INPUT", "recipient": str(Keypair().pubkey()), **more,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("body", "code", "named"),
    [
        (_from_svm(txs=[{"to": EVM_USER, "value": "0", "data": "0x"}]),
         "EXTRA_TXS_NOT_SUPPORTED", "txs"),
        (_to_svm(appFees=[{"recipient": EVM_USER, "fee": "50"}]),
         "UNSUPPORTED_EXECUTION_TYPE", "appFees"),
        (_to_svm(subsidizeFees=True), "UNSUPPORTED_EXECUTION_TYPE", "subsidizeFees"),
        (_from_svm(topupGas=True), "UNSUPPORTED_ROUTE", "topupGas"),
        (_to_svm(useDepositAddress=True), "UNSUPPORTED_EXECUTION_TYPE", "useDepositAddress"),
    ],
)  # fmt: skip
def test_an_option_svm_routes_do_not_serve_is_refused(
    http: httpx.Client, body: dict[str, Any], code: str, named: str
) -> None:
    refused = http.post("/quote/v2", json=body)
    assert refused.status_code == 400, refused.text
    assert refused.json()["errorCode"] == code
    assert named in refused.json()["message"]
    validate_against("quote-error", refused.json())


def test_protocol_data_and_a_fixed_rate_are_served(
    devnet: RunningDevnet, http: httpx.Client
) -> None:
    for body in (_from_svm(includeProtocolData=True, fixedRate="200"),
                 _to_svm(includeProtocolData=True, fixedRate="200")):  # fmt: skip
        quote = request_quote(http, body)
        validate_against("quote", quote)
        protocol = quote["protocol"]["v2"]
        signer = Account.recover_message(
            encode_defunct(bytes.fromhex(protocol["orderId"][2:])),
            signature=protocol["orderSignature"],
        )
        assert signer.lower() == devnet.deployment.solver.address.lower()
        assert quote["details"]["isFixedRate"] is True
        assert quote["details"]["fixedRateFee"] is not None
        assert quote["fees"]["relayerService"]["amount"] == str(int(body["amount"]) * 200 // 10_000)
