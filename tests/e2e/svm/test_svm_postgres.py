"""Both SVM directions on PostgreSQL: the SVM journal, cursors and signatures in its columns."""

from __future__ import annotations

from eth_account import Account
from solders.keypair import Keypair

from crossfill.config import Deployment
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, balance, funded_user
from tests.e2e.svm.routes import SOL, from_svm, to_svm
from tests.e2e.user_client import UserClient, evm_wallet, succeeded, svm_wallet
from tests.support.service import StartService
from tests.support.wallets.svm import sol_balance


def test_to_and_from_svm_on_postgresql(
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    svm_deployment: Deployment,
    start_service: StartService,
    postgres_url: str,
    chain_urls: dict[int, str],
) -> None:
    node, _seeded = svm_node
    service = start_service(
        svm_deployment, run_workers=True, settings={"database_url": postgres_url}
    )
    with UserClient(service.base_url, chain_urls) as user_client:
        user, svm_recipient = funded_user(devnet), Keypair().pubkey()
        to_svm_quote = user_client.quote(
            to_svm(user.address, str(svm_recipient), (NATIVE, SOL), 10**17)
        )
        succeeded(user_client.execute(to_svm_quote, evm_wallet(user)))
        assert sol_balance(node.rpc_url, svm_recipient) == to_svm_quote.details.currency_out.amount

        svm_user, evm_recipient = svm_accounts.users()[3], Account.create().address
        from_svm_quote = user_client.quote(from_svm(svm_user, evm_recipient, 10**9))
        succeeded(user_client.execute(from_svm_quote, svm_wallet(svm_user)))
        assert (
            balance(devnet, DESTINATION, NATIVE, evm_recipient)
            == from_svm_quote.details.currency_out.amount
        )
