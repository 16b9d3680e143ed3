"""An order paid on an EVM chain and filled on the SVM chain: once the fill is finalized there,
the solver is repaid exactly the deposit out of the origin Depository, once."""

from __future__ import annotations

from solders.keypair import Keypair

from crossfill.config import Deployment
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import NATIVE, ORIGIN, balance, funded_user
from tests.e2e.repaying import REPAY_AT_ONCE, repaid_to_solver
from tests.e2e.svm.routes import SOL, to_svm
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.money_invariant import account_for_money, heads
from tests.support.service import ServiceThread, StartService


def test_an_svm_fill_finalized_repays_the_solver_the_evm_deposit(
    devnet: RunningDevnet,
    start_service: StartService,
    svm_deployment: Deployment,
    chain_urls: dict[int, str],
) -> None:
    service: ServiceThread = start_service(
        svm_deployment.model_copy(update={"repayment": REPAY_AT_ONCE}), run_workers=True
    )
    since = heads(svm_deployment)
    user, recipient = funded_user(devnet), Keypair().pubkey()
    with UserClient(service.base_url, chain_urls) as client:
        quote = client.quote(to_svm(user.address, str(recipient), (NATIVE, SOL), 10**17))
        succeeded(client.execute(quote, evm_wallet(user)))
    deposited = quote.details.currency_in.amount
    depository = evm_chains(devnet.deployment)[0].contracts.depository
    held = balance(devnet, ORIGIN, NATIVE, depository)

    payout = repaid_to_solver(devnet, service.settings.database, quote.request_id)

    assert (payout.currency, payout.amount) == (NATIVE, deposited)
    assert held - balance(devnet, ORIGIN, NATIVE, depository) == deposited
    report = account_for_money(svm_deployment, service.settings.database, since=since)
    assert (report.repaid, report.unaccounted) == (1, [])
