"""The books on the devnet: after bridges filled and repaid and a deposit refunded, each chain's
Depository and the solver key agree with their books to the wei (`GET /admin/books`); a stranger's
transfer to the Depository shows as a named unexplained difference and raises the metric; bad
input is refused with a clear 4xx. On SQLite and PostgreSQL."""

from __future__ import annotations

import os
from typing import Any

import httpx
from eth_typing import HexStr
from prometheus_client.parser import text_string_to_metric_families
from web3.types import Wei

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.books import SEEN_UNCONFIRMED, UNRECORDED_IN
from crossfill.domain.confirmations import ConfirmationTier
from crossfill.kinds.evm.config import evm_chain, evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
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
    usdc,
)
from tests.e2e.conftest import on_database
from tests.e2e.repaying import repaying, repayments
from tests.support.service import ServiceThread, StartService, run_cli
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

USDC_IN = 20_000_000
DONATION = 12_345
# Blocks a deposit must be deep on the origin, in the test of a deposit not yet confirmed.
DEEP = 1_000


def _books(http: httpx.Client, **params: Any) -> dict[str, Any]:
    answer = http.get("/admin/books", params=params, headers=OPERATOR)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _rows(books: dict[str, Any], chain_id: int, account: str) -> list[dict[str, Any]]:
    (chain,) = [chain for chain in books["chains"] if chain["chainId"] == chain_id]
    return [row for row in chain["reconciliation"] if row["account"] == account]


def _currency_books(books: dict[str, Any], chain_id: int, currency: str) -> dict[str, Any]:
    (chain,) = [chain for chain in books["chains"] if chain["chainId"] == chain_id]
    found: list[dict[str, Any]] = [
        row for row in chain["currencies"] if row["currency"] == currency.lower()
    ]
    (row,) = found
    return row


def _exact(books: dict[str, Any]) -> bool:
    """Every Depository and key agrees with its books to the wei, nothing in flight."""
    return not books["unexplained"] and all(
        row["difference"] == "0" and row["explained"] == []
        for chain in books["chains"]
        for row in chain["reconciliation"]
    )


def _settled(service: ServiceThread, count: int) -> bool:
    rows = repayments(service.settings.database)
    return len(rows) == count and all(row.state == "repaid" for row in rows)


def _unexplained_metric(
    service: ServiceThread, chain_id: int, account: str, currency: str
) -> float:
    answer = httpx.get(f"{service.base_url}/metrics", timeout=10)
    assert answer.status_code == 200, answer.text
    found = [
        sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
        if sample.name == "crossfill_books_unexplained"
        and sample.labels == {"chain_id": str(chain_id), "account": account, "currency": currency}
    ]
    assert found, "the series is exported"
    return found[0]


def _donate(devnet: RunningDevnet, depository: str) -> None:
    """A stranger pays the origin Depository `DONATION` of ether and of USDC, outside any
    deposit: the ether through a contract that destroys itself in its creation, paying its
    balance to the Depository (which takes no plain transfer), the USDC as a plain transfer."""
    stranger = signing_web3(rpc_urls(devnet)[ORIGIN], accounts.deployer())
    # PUSH20 <the Depository>, SELFDESTRUCT
    to_depository = HexStr("0x73" + depository.lower().removeprefix("0x") + "ff")
    sent = stranger.eth.send_transaction({"data": to_depository, "value": Wei(DONATION)})
    assert stranger.eth.wait_for_transaction_receipt(sent)["status"] == 1
    token = contract_at(stranger, "TestUSDC", usdc(devnet, ORIGIN))
    send(stranger, token.functions.mint(accounts.deployer().address, DONATION))
    send(stranger, token.functions.transfer(depository, DONATION))


def _cli_books(service: ServiceThread, database: str | None) -> tuple[int, str]:
    """`crossfill books --chain ORIGIN` run by the operator beside the service."""
    settings = service.settings
    result = run_cli(
        "books", "--chain", str(ORIGIN), environment={**os.environ, "COLUMNS": "400"},
        home=settings.home, deployment_file=settings.deployment_file,
        **on_database(database),
    )  # fmt: skip
    return result.returncode, result.stdout + result.stderr


def test_the_books_reconcile_to_the_wei_and_a_donation_is_an_alert(
    start_service: StartService, devnet: RunningDevnet, database: str | None
) -> None:
    service = start_service(
        repaying(devnet.deployment, final_at=1),
        run_workers=True,
        settings=on_database(database, admin_token=OPERATOR_TOKEN),
    )
    solver = "key:" + accounts.solver().address.lower()
    origin = evm_chain(devnet.deployment, ORIGIN)
    assert origin is not None
    user = funded_user(devnet, usdc_amount=USDC_IN)
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        opened = _books(http)  # opens every account at its balance on chain
        assert not opened["unexplained"], opened

        bridges = [
            native_bridge(user.address),
            native_bridge(
                user.address,
                originCurrency=usdc(devnet, ORIGIN),
                destinationCurrency=usdc(devnet, DESTINATION),
                amount=str(USDC_IN),
            ),
        ]
        quotes = [request_quote(http, body) for body in bridges]
        for quote in quotes:
            execute_steps(quote, user, rpc_urls(devnet))
        for quote in quotes:
            assert final_status(http, quote_request_id(quote))["status"] == "success"
        underpaid = request_quote(http, native_bridge(user.address))
        deposit_native(
            devnet, user, underpaid, int(underpaid["details"]["currencyIn"]["amount"]) // 2
        )
        assert final_status(http, quote_request_id(underpaid), until=REFUNDED)["status"] == "refund"
        assert wait_for(lambda: _settled(service, 2), timeout=30, interval=0.2)

        seen: list[dict[str, Any]] = []

        def exact() -> bool:
            seen.append(_books(http))
            return _exact(seen[-1])

        assert wait_for(exact, timeout=30, interval=0.5), seen[-1]
        books = seen[-1]
        for chain_id in (ORIGIN, DESTINATION):
            for account in ("depository", solver):
                rows = _rows(books, chain_id, account)
                assert {row["symbol"] for row in rows} >= {"ETH", "USDC"}
                assert all(row["onChain"] == row["booked"] for row in rows), rows
        for currency in (NATIVE, usdc(devnet, ORIGIN)):
            owed = _currency_books(books, ORIGIN, currency)
            assert (owed["owedToUsers"], owed["owedToSolver"]) == ("0", "0"), owed
        assert int(_currency_books(books, DESTINATION, NATIVE)["gasSpent"]) > 0
        assert _unexplained_metric(service, ORIGIN, "depository", "ETH") == 0

        assert _cli_books(service, database)[0] == 0
        _donate(devnet, origin.contracts.depository)

        # Until the indexer has read the donation's block, a surplus there is named deposits
        # not read yet; once read, nothing records it.
        read: list[dict[str, Any]] = []

        def unexplained() -> bool:
            read.append(_books(http, chainId=ORIGIN))
            return read[-1]["unexplained"] is True

        assert wait_for(unexplained, timeout=30), read[-1]
        donated = read[-1]
        assert [chain["chainId"] for chain in donated["chains"]] == [ORIGIN]
        for row in _rows(donated, ORIGIN, "depository"):
            if row["symbol"] in ("ETH", "USDC"):
                assert (row["unexplained"], row["unexplainedCause"]) == (
                    str(DONATION),
                    UNRECORDED_IN,
                ), row
        assert _unexplained_metric(service, ORIGIN, "depository", "ETH") > 0
        assert _unexplained_metric(service, ORIGIN, "depository", "USDC") > 0
        # The solver key and the destination are untouched by it.
        assert all(row["unexplained"] == "0" for row in _rows(donated, ORIGIN, solver))
        code, shown = _cli_books(service, database)
        assert code == 2, shown  # the operator's command says so too, in its exit status
        assert f"{DONATION} (received, recorded by nothing" in shown


def test_a_deposit_seen_and_not_yet_confirmed_is_a_named_difference(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    """On chain before it is deep enough to be confirmed (and posted): the Depository holds
    more than its books by exactly the deposit, named, nothing unexplained."""
    deep = (ConfirmationTier(blocks=DEEP),)
    chains = tuple(
        chain.model_copy(update={"confirmations": deep}) if chain.id == ORIGIN else chain
        for chain in evm_chains(devnet.deployment)
    )
    deployment = devnet.deployment.model_copy(update={"chains": chains})
    service = start_service(deployment, run_workers=True, settings={"admin_token": OPERATOR_TOKEN})
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        assert not _books(http, chainId=ORIGIN)["unexplained"]
        quote = request_quote(http, native_bridge(user.address))
        amount = int(quote["details"]["currencyIn"]["amount"])
        execute_steps(quote, user, rpc_urls(devnet))
        seen: list[dict[str, Any]] = []

        def named() -> bool:
            seen.append(_books(http, chainId=ORIGIN))
            (eth,) = [r for r in _rows(seen[-1], ORIGIN, "depository") if r["symbol"] == "ETH"]
            return bool(eth["explained"] == [{"cause": SEEN_UNCONFIRMED, "amount": str(amount)}])

        assert wait_for(named, timeout=20, interval=0.3), seen[-1]
        (eth,) = [r for r in _rows(seen[-1], ORIGIN, "depository") if r["symbol"] == "ETH"]
        assert (eth["difference"], eth["unexplained"]) == (str(amount), "0")
        assert not seen[-1]["unexplained"]


def test_bad_input_is_refused_clearly(start_service: StartService) -> None:
    service = start_service(settings={"admin_token": OPERATOR_TOKEN})
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        refused = http.get("/admin/books")
        assert refused.status_code == 401, refused.text
        for bad in ("abc", "-1", "0"):
            answer = http.get("/admin/books", params={"chainId": bad}, headers=OPERATOR)
            assert answer.status_code == 400, answer.text
            assert answer.json()["statusCode"] == 400 and answer.json()["message"]
        unknown = http.get("/admin/books", params={"chainId": 999}, headers=OPERATOR)
        assert unknown.status_code == 400, unknown.text
        assert "999" in unknown.json()["message"]
