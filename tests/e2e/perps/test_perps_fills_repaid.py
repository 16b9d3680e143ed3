"""An order paid on an EVM chain and filled on the perps exchange: once the exchange's ledger
shows the credit, the solver is repaid exactly the deposit out of the origin Depository, once."""

from __future__ import annotations

from eth_account import Account

from crossfill.config import Deployment
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import ORIGIN, balance, funded_user, usdc
from tests.e2e.perps.conftest import to_perps
from tests.e2e.repaying import REPAY_AT_ONCE, repaid_to_solver
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.money_invariant import account_for_money, heads
from tests.support.service import StartService

USDC_IN = 20 * 10**6


def test_a_perps_credit_repays_the_solver_the_evm_deposit(
    devnet: RunningDevnet,
    start_service: StartService,
    perps_deployment: Deployment,
    chain_urls: dict[int, str],
) -> None:
    service = start_service(
        perps_deployment.model_copy(update={"repayment": REPAY_AT_ONCE}), run_workers=True
    )
    since = heads(perps_deployment)
    user, recipient = funded_user(devnet, usdc_amount=USDC_IN), Account.create().address
    token = usdc(devnet, ORIGIN)
    depository = evm_chains(devnet.deployment)[0].contracts.depository
    held = balance(devnet, ORIGIN, token, depository)
    with UserClient(service.base_url, chain_urls) as client:
        quote = client.quote(to_perps(user.address, recipient, token, USDC_IN))
        succeeded(client.execute(quote, evm_wallet(user)))
    assert balance(devnet, ORIGIN, token, depository) - held == USDC_IN

    payout = repaid_to_solver(devnet, service.settings.database, quote.request_id)

    assert (payout.currency, payout.amount) == (token.lower(), USDC_IN)
    assert balance(devnet, ORIGIN, token, depository) == held
    report = account_for_money(perps_deployment, service.settings.database, since=since)
    assert (report.repaid, report.unaccounted) == (1, [])
