"""GET /requests/{requestId}/signature: the solver's attestation, checked on chain."""

from __future__ import annotations

import httpx
from eth_account import Account
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, deploy, signing_web3
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, ORIGIN, bridge_request, funded_user, rpc_urls, usdc
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.support.service import ServiceThread, StartService

AMOUNT = 12_000_000


def _word(address: str) -> bytes:
    return bytes.fromhex(address[2:]).rjust(32, b"\0")


def _verified_signer(devnet: RunningDevnet, request_id: str, answer: dict[str, object]) -> str:
    """Who signed the answer, as the devnet's AttestationVerifier recovers it on chain."""
    web3 = signing_web3(evm_chains(devnet.deployment)[0].rpc_url, accounts.deployer())
    verifier = contract_at(web3, "AttestationVerifier", deploy(web3, "AttestationVerifier"))
    data = answer["requestData"]
    assert isinstance(data, dict)
    signer: str = verifier.functions.signerOf(
        bytes.fromhex(request_id[2:]),
        data["originChainId"],
        _word(data["originUser"]),
        _word(data["originCurrency"]),
        int(data["originAmount"]),
        data["destinationChainId"],
        _word(data["destinationUser"]),
        bytes.fromhex(str(answer["signature"])[2:]),
    ).call()
    return signer


def test_attestation_of_a_deposited_request_is_the_solvers_on_chain(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service: ServiceThread = start_service(run_workers=True)
    user = funded_user(devnet, usdc_amount=50_000_000)
    recipient = Account.create().address
    currencies = (usdc(devnet, ORIGIN), usdc(devnet, DESTINATION))
    request = bridge_request(user.address, currencies, AMOUNT, recipient=recipient)
    with (
        httpx.Client(base_url=service.base_url, timeout=10) as http,
        UserClient(service.base_url, rpc_urls(devnet)) as user_client,
    ):
        quote = user_client.quote(request)
        request_id = quote.request_id
        before = http.get(f"/requests/{request_id}/signature")
        assert before.status_code == 400, before.text
        assert before.json()["code"] == "REQUEST_NOT_DEPOSITED"
        assert before.json()["statusCode"] == 400

        succeeded(user_client.execute(quote, evm_wallet(user)))
        answer = http.get(f"/requests/{request_id}/signature")
        assert answer.status_code == 200, answer.text
        attested = answer.json()

    assert attested["requestData"] == {
        "originChainId": ORIGIN,
        "originUser": attested["requestData"]["originUser"],
        "originCurrency": attested["requestData"]["originCurrency"],
        "originAmount": str(AMOUNT),
        "destinationChainId": DESTINATION,
        "destinationUser": attested["requestData"]["destinationUser"],
    }
    assert attested["requestData"]["originUser"].lower() == user.address.lower()
    assert attested["requestData"]["originCurrency"].lower() == usdc(devnet, ORIGIN).lower()
    assert attested["requestData"]["destinationUser"].lower() == recipient.lower()
    signer = _verified_signer(devnet, request_id, attested)
    assert signer == Web3.to_checksum_address(devnet.deployment.solver.address)


def test_attestation_of_an_unknown_request_is_404_and_a_bad_id_400(
    client: httpx.Client,
) -> None:
    unknown = client.get(f"/requests/0x{'ab' * 32}/signature")
    assert unknown.status_code == 404
    assert set(unknown.json()) >= {"message", "statusCode"}
    malformed = client.get("/requests/0x1234/signature")
    assert malformed.status_code == 400
    assert "requestId" in malformed.json()["message"]
