"""The books beyond the EVM chains, on the devnet (the EVM chains, the LiteSVM node, the devnet
exchange, the real API): bridges from an EVM chain to the SVM chain and to the perps exchange
filled, a deposit into the SVM vault filled on an EVM chain, an underpaid one refunded from the
vault, and a stray transfer into the solver's exchange account refunded from it; then every
chain's books agree with the chain (and the exchange) to the smallest unit, nothing unexplained
(`GET /admin/books`, `crossfill books`). On SQLite and PostgreSQL."""

from __future__ import annotations

import os
import time
import tomllib
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_account import Account
from solders.keypair import Keypair

from crossfill.devnet import accounts
from crossfill.devnet.deployment_file import write_deployment
from crossfill.devnet.exchange.deployment import perps_document
from crossfill.devnet.exchange.process import ExchangeProcess, fund
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.deployment import svm_chain_document
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.domain.books import key_account
from crossfill.kinds.perps.actions import UsdSend, sign_action
from crossfill.kinds.perps.config import PerpsExchangeConfig
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.config import SVM_CHAIN_ID
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    NATIVE,
    OPERATOR,
    OPERATOR_TOKEN,
    ORIGIN,
    REFUNDED,
    final_status,
    funded_user,
    request_quote,
    rpc_urls,
    usdc,
)
from tests.e2e.conftest import on_database
from tests.e2e.perps.conftest import PERPS_ID, PERPS_USDC, to_perps, withdrawable
from tests.e2e.svm.routes import SOL, from_svm, to_svm
from tests.e2e.user_client import UserClient, evm_wallet, succeeded, svm_wallet
from tests.support.devnets import running_exchange, running_svm_node, with_svm_chain
from tests.support.service import ServiceThread, StartService, run_cli
from tests.support.waiting import wait_for
from tests.support.wallets.perps import post_to_exchange
from tests.support.wallets.svm import sign_and_send, sol_balance

TOKEN_ACCOUNT_RENT = 2_039_280  # lamports
VAULT = key_account(str(svm_accounts.solver().pubkey()))
EXCHANGE_ACCOUNT = key_account(accounts.solver().address)


@pytest.fixture(scope="module")
def svm_node(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SvmNodeProcess, SeededSvm]]:
    with running_svm_node(tmp_path_factory.mktemp("svm")) as node_and_seed:
        yield node_and_seed


@pytest.fixture(scope="module")
def exchange(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExchangeProcess]:
    with running_exchange(tmp_path_factory.mktemp("exchange")) as process:
        yield process


def _books(http: httpx.Client, **params: Any) -> dict[str, Any]:
    answer = http.get("/admin/books", params=params, headers=OPERATOR)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _chain(books: dict[str, Any], chain_id: int) -> dict[str, Any]:
    found: list[dict[str, Any]] = [c for c in books["chains"] if c["chainId"] == chain_id]
    (chain,) = found
    return chain


def _rows(books: dict[str, Any], chain_id: int, account: str) -> dict[str, dict[str, Any]]:
    """The account's reconciliation rows on the chain, by currency."""
    rows = _chain(books, chain_id)["reconciliation"]
    return {row["currency"]: row for row in rows if row["account"] == account}


def _exact(books: dict[str, Any]) -> bool:
    """Every account of every chain agrees with its books, nothing in flight or unread."""
    return not books["unexplained"] and all(
        row["difference"] == "0" and row["explained"] == []
        for chain in books["chains"]
        for row in chain["reconciliation"]
    )


def _stray_transfer_in(exchange: ExchangeProcess, config: PerpsExchangeConfig) -> str:
    """A user of the exchange sends 3 USDC to the solver's account for no request: a transfer
    in that pays for nothing, refunded. The sender's address."""
    sender = Account.create()
    fund(exchange.api_url, sender.address, "5")
    sent = UsdSend(
        config.exchange_chain, config.signature_chain, accounts.solver().address.lower(), "3",
        time=int(time.time() * 1000),
    )  # fmt: skip
    posted = post_to_exchange(exchange, sign_action(sent, sender).request_body())
    assert posted["status"] == "ok", posted
    return str(sender.address)


def _deployment_file(
    devnet: RunningDevnet, node: SvmNodeProcess, seeded: SeededSvm, exchange: ExchangeProcess,
    home: Path,
) -> Path:  # fmt: skip
    """The session devnet's deployment file with the SVM chain and the exchange, for the
    operator's command."""
    document = tomllib.loads(devnet.deployment_path.read_text())
    document["svm_chains"] = [
        svm_chain_document(rpc_url=node.rpc_url, ws_url=node.ws_url, seeded=seeded)
    ]
    document["perps"] = perps_document(api_url=exchange.api_url)
    path = home / "deployment-with-kinds.toml"
    write_deployment(path, document)
    return path


def _cli_books(service: ServiceThread, database: str | None, deployment: Path) -> tuple[int, str]:
    """`crossfill books`, every chain, as the operator runs it beside the service."""
    result = run_cli(
        "books", environment={**os.environ, "COLUMNS": "400"}, home=service.settings.home,
        deployment_file=deployment, mode="devnet", **on_database(database),
    )  # fmt: skip
    return result.returncode, result.stdout + result.stderr


def test_the_svm_vault_and_the_exchange_account_reconcile_to_the_unit(
    start_service: StartService,
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    exchange: ExchangeProcess,
    database: str | None,
) -> None:
    node, seeded = svm_node
    config = PerpsExchangeConfig.model_validate(perps_document(api_url=exchange.api_url))
    deployment = with_svm_chain(devnet.deployment, node, seeded).model_copy(
        update={"perps": config}
    )
    service = start_service(
        deployment, run_workers=True, settings=on_database(database, admin_token=OPERATOR_TOKEN)
    )
    urls = {**rpc_urls(devnet), SVM_CHAIN_ID: node.rpc_url, PERPS_ID: exchange.api_url}
    with (
        httpx.Client(base_url=service.base_url, timeout=30) as http,
        UserClient(service.base_url, urls) as user_client,
    ):
        opened = _books(http)  # opens every account at its balance on chain
        assert not opened["unexplained"], opened
        assert {SVM_CHAIN_ID, PERPS_ID} <= {chain["chainId"] for chain in opened["chains"]}

        # An EVM deposit filled from the vault, and one filled from the exchange account.
        user, perps_recipient = funded_user(devnet, usdc_amount=20 * 10**6), Account.create()
        to_vault = user_client.quote(
            to_svm(user.address, str(svm_accounts.users()[4].pubkey()), (NATIVE, SOL), 10**16)
        )
        succeeded(user_client.execute(to_vault, evm_wallet(user)))
        to_exchange = user_client.quote(
            to_perps(user.address, perps_recipient.address, usdc(devnet, ORIGIN), 10 * 10**6)
        )
        succeeded(user_client.execute(to_exchange, evm_wallet(user)))
        # USDC from the vault to a new account: the vault opens its token account (rent).
        tokens_to_vault = user_client.quote(
            to_svm(
                user.address, str(Keypair().pubkey()),
                (usdc(devnet, ORIGIN), str(seeded.usdc_mint)), 5 * 10**6,
            )
        )  # fmt: skip
        succeeded(user_client.execute(tokens_to_vault, evm_wallet(user)))
        # A deposit into the vault filled on an EVM chain.
        svm_user = svm_accounts.users()[0]
        withdrawal = user_client.quote(from_svm(svm_user, Account.create().address, 10**9))
        succeeded(user_client.execute(withdrawal, svm_wallet(svm_user)))
        # One too small, paid back from the vault.
        underpaid_user = svm_accounts.users()[2]
        underpaid = request_quote(
            http, from_svm(underpaid_user, Account.create().address, 10**9).wire()
        )
        vault = svm_accounts.solver().pubkey()
        sign_and_send(
            node.rpc_url,
            [
                programs.transfer_sol(underpaid_user.pubkey(), vault, 10**8),
                programs.memo(underpaid["protocol"]["v2"]["orderId"]),
            ],
            underpaid_user,
        )
        assert final_status(http, underpaid["steps"][0]["requestId"], until=REFUNDED)
        # A transfer into the exchange account for nothing, paid back from it.
        sender = _stray_transfer_in(exchange, config)
        assert wait_for(lambda: withdrawable(exchange, sender) == Decimal(5), timeout=30)

        seen: list[dict[str, Any]] = []

        def exact() -> bool:
            seen.append(_books(http))
            return _exact(seen[-1])

        assert wait_for(exact, timeout=60, interval=0.5), seen[-1]
        books = seen[-1]
        vault_rows = _rows(books, SVM_CHAIN_ID, VAULT)
        assert set(vault_rows) == {SOL, str(seeded.usdc_mint).lower()}
        assert vault_rows[SOL]["onChain"] == str(sol_balance(node.rpc_url, vault))
        assert vault_rows[SOL]["booked"] == vault_rows[SOL]["onChain"]
        exchange_usdc = _rows(books, PERPS_ID, EXCHANGE_ACCOUNT)[PERPS_USDC]
        assert exchange_usdc["booked"] == exchange_usdc["onChain"]
        usd = withdrawable(exchange, accounts.solver().address)
        assert exchange_usdc["onChain"] == str(int(usd * 10**6))
        (svm_sol,) = [c for c in _chain(books, SVM_CHAIN_ID)["currencies"] if c["symbol"] == "SOL"]
        # Nothing held for users any more; the vault's three payments (two fills, the refund)
        # cost it a signature's fee each, and the USDC fill the rent of its recipient's token
        # account: its gas.
        assert svm_sol["owedToUsers"] == "0"
        assert svm_sol["gasSpent"] == str(3 * 5000 + TOKEN_ACCOUNT_RENT)
        (perps_usdc,) = [
            c for c in _chain(books, PERPS_ID)["currencies"] if c["currency"] == PERPS_USDC
        ]
        assert perps_usdc["owedToUsers"] == "0"
        # Filled from the exchange account, the deposit kept on the EVM origin: the fill's cost.
        assert int(perps_usdc["feesEarned"]) == -to_exchange.details.currency_out.amount

        deployment_path = _deployment_file(devnet, node, seeded, exchange, service.settings.home)
        code, shown = _cli_books(service, database, deployment_path)
        assert code == 0, shown
        assert f"chain {SVM_CHAIN_ID}: reconciliation" in shown
        assert f"chain {PERPS_ID}: reconciliation" in shown
