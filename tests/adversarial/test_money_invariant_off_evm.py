"""The money invariant's checker off the EVM chains: it reads the SVM vault and the solver's
exchange account from their own ledgers, so it finds a deposit there that no service recorded,
a payment out of them that no record explains, and a refund the records claim that the chain
does not show; and it reads fills paid there from the chain, not from the records."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.config import Deployment
from crossfill.devnet import accounts
from crossfill.devnet.exchange.process import ExchangeProcess, fund
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.perps.actions import UsdSend, sign_action
from crossfill.kinds.perps.config import PERPS_USDC_ADDRESS, perps_exchange
from crossfill.kinds.svm import programs
from crossfill.store.tables import Deposit
from tests.adversarial.cross_vm import PERPS_ID, SOL, SVM_ID
from tests.adversarial.quote_seeds import route_body
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    NATIVE,
    ORIGIN,
    REFUNDED,
    deposit_native,
    deposit_usdc,
    final_status,
    funded_user,
    request_quote,
    usdc,
)
from tests.money_invariant import MoneyReport, account_for_money, heads
from tests.support.database import write
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.perps import post_to_exchange, sign_authorization, signed_deposit
from tests.support.wallets.svm import airdrop, sign_and_send

SOL_UNIT = 10**9
NO_LIMITS = {"rate_limit_anonymous_per_minute": 0, "rate_limit_key_per_minute": 0}


def _svm_pay(rpc_url: str, payer: Keypair, to: str, lamports: int, memo: str) -> str:
    instructions = [
        programs.transfer_sol(payer.pubkey(), Pubkey.from_string(to), lamports),
        programs.memo(memo),
    ]
    return str(sign_and_send(rpc_url, instructions, payer).signatures[0])


def _usd_send(exchange: ExchangeProcess, deployment: Deployment, sender: LocalAccount,
              to: str, usd: str) -> str:  # fmt: skip
    """A perps USDC transfer on the exchange, signed by `sender`; its ledger hash."""
    perps = perps_exchange(deployment)
    assert perps is not None
    action = UsdSend(perps.exchange_chain, perps.signature_chain, to.lower(), usd,
                     time=int(time.time() * 1000))  # fmt: skip
    body = sign_action(action, sender).request_body()
    assert post_to_exchange(exchange, body)["status"] == "ok"
    return _ledger_hash(exchange, sender.address, action.time)


def _ledger_hash(exchange: ExchangeProcess, user: str, time_ms: int) -> str:
    reply = httpx.post(
        f"{exchange.api_url}/info",
        json={"type": "userNonFundingLedgerUpdates", "user": user, "startTime": 0},
        timeout=10,
    )
    (entry,) = [e for e in reply.json() if e["delta"].get("nonce") == time_ms]
    return str(entry["hash"])


def _record(database_url: str, row: Deposit) -> int:
    """A deposit row written as the service would, with whatever it claims; its id."""

    async def added(session: AsyncSession) -> int:
        session.add(row)
        await session.flush()
        return row.id

    return write(database_url, added)


@dataclass(frozen=True)
class Bare:
    """A service on every kind of chain whose database nothing records into (no workers),
    and where a check of what follows starts."""

    service: ServiceThread
    deployment: Deployment
    since: dict[int, int]

    def report(self) -> MoneyReport:
        return account_for_money(self.deployment, self.service.settings.database, since=self.since)


@pytest.fixture
def bare(start_service: StartService, cross_vm_deployment: Deployment) -> Bare:
    service = start_service(cross_vm_deployment)
    return Bare(service, cross_vm_deployment, heads(cross_vm_deployment))


@dataclass(frozen=True)
class ClaimedRefund:
    """A stray deposit the records say was paid back in full by `refund`."""

    chain_id: int
    deposit: str
    depositor: str
    currency: str
    amount: int
    refund: str

    def report(self, bare: Bare) -> tuple[MoneyReport, str]:
        """The report once the records claim it, and the line it gives the refund's payout."""
        row = Deposit(
            chain_id=self.chain_id, tx_hash=self.deposit, log_index=0, part=0, block_number=0,
            block_hash=self.deposit[:64], order_id="", depositor=self.depositor,
            currency=self.currency, amount=str(self.amount), state="confirmed",
            outcome="ORPHANED_DEPOSIT_REFUND", refund_status="done", refund_tx_hash=self.refund,
            refund_amount=str(self.amount), created_at=datetime.now(UTC),
        )  # fmt: skip
        row_id = _record(bare.service.settings.database, row)
        report = bare.report()
        payout = (
            f"payout {self.chain_id}:{self.refund} pays no deposit or claim; named by "
            f"['deposit {row_id} ({self.deposit}:0, refund done)']"
        )
        return report, payout


def test_a_vault_deposit_nobody_recorded_is_not_accounted_for(
    bare: Bare, svm_node: tuple[SvmNodeProcess, SeededSvm]
) -> None:
    node, _seeded = svm_node
    user = Keypair()
    airdrop(node.rpc_url, user.pubkey(), SOL_UNIT)
    vault = str(svm_accounts.solver().pubkey())
    signature = _svm_pay(node.rpc_url, user, vault, SOL_UNIT // 100, "0x" + "17" * 32)
    _svm_pay(node.rpc_url, user, vault, SOL_UNIT // 100, "crossfill:topup")  # no deposit
    report = bare.report()
    assert report.deposits == 1
    assert report.unsettled == [f"{SVM_ID}:{signature}:0 ({SOL_UNIT // 100} of {SOL}): "
                                "not recorded yet"]  # fmt: skip
    assert report.unaccounted == []


def test_a_payment_out_of_the_vault_that_no_record_explains_is_found(
    bare: Bare, svm_node: tuple[SvmNodeProcess, SeededSvm]
) -> None:
    node, _seeded = svm_node
    stranger = str(Keypair().pubkey())
    signature = _svm_pay(node.rpc_url, svm_accounts.solver(), stranger, SOL_UNIT // 100, "gift")
    report = bare.report()
    assert report.unaccounted == [f"payout {SVM_ID}:{signature} pays no deposit or claim"]


def test_an_svm_refund_that_pays_back_less_than_recorded_is_found(
    bare: Bare, svm_node: tuple[SvmNodeProcess, SeededSvm]
) -> None:
    node, _seeded = svm_node
    user, vault = Keypair(), svm_accounts.solver()
    airdrop(node.rpc_url, user.pubkey(), SOL_UNIT)
    deposit = _svm_pay(node.rpc_url, user, str(vault.pubkey()), SOL_UNIT // 10, "no order")
    # Half of it paid back; the records say all of it was.
    refund = _svm_pay(node.rpc_url, vault, str(user.pubkey()), SOL_UNIT // 20, "refund")
    claimed = ClaimedRefund(SVM_ID, deposit, str(user.pubkey()), SOL, SOL_UNIT // 10, refund)
    report, payout = claimed.report(bare)
    assert report.unaccounted == [
        f"{SVM_ID}:{deposit}:0 ({SOL_UNIT // 10} of {SOL}) part 0: refund paid "
        f"{SOL_UNIT // 20}, the service says {SOL_UNIT // 10}",
        payout,
    ]


def test_an_exchange_transfer_nobody_recorded_is_not_accounted_for(
    bare: Bare, exchange: ExchangeProcess
) -> None:
    user: LocalAccount = Account.create()
    fund(exchange.api_url, user.address, "10")
    transfer = _usd_send(exchange, bare.deployment, user, accounts.solver().address, "2.5")
    report = bare.report()
    assert report.deposits == 1
    assert report.unsettled == [
        f"{PERPS_ID}:{transfer}:0 (2500000 of {PERPS_USDC_ADDRESS}): not recorded yet"
    ]


def test_a_transfer_out_of_the_solvers_exchange_account_that_no_record_explains_is_found(
    bare: Bare, exchange: ExchangeProcess
) -> None:
    stranger = Account.create().address
    transfer = _usd_send(exchange, bare.deployment, accounts.solver(), stranger, "1")
    report = bare.report()
    assert report.unaccounted == [f"payout {PERPS_ID}:{transfer} pays no deposit or claim"]


def test_an_exchange_refund_paid_to_someone_else_is_found(
    bare: Bare, exchange: ExchangeProcess
) -> None:
    user: LocalAccount = Account.create()
    fund(exchange.api_url, user.address, "10")
    solver = accounts.solver()
    deposit = _usd_send(exchange, bare.deployment, user, solver.address, "3")
    refund = _usd_send(exchange, bare.deployment, solver, Account.create().address, "3")
    claimed = ClaimedRefund(PERPS_ID, deposit, user.address.lower(), PERPS_USDC_ADDRESS,
                            3_000_000, refund)  # fmt: skip
    report, payout = claimed.report(bare)
    assert report.unaccounted == [
        f"{PERPS_ID}:{deposit}:0 (3000000 of {PERPS_USDC_ADDRESS}) part 0: refund {refund} "
        "is not a payout of it",
        payout,
    ]


def test_fills_to_the_svm_chain_and_the_exchange_are_read_from_their_ledgers(
    start_service: StartService, cross_vm_deployment: Deployment, devnet: RunningDevnet
) -> None:
    since = heads(cross_vm_deployment)
    service = start_service(cross_vm_deployment, run_workers=True, settings=NO_LIMITS)
    user = funded_user(devnet, usdc_amount=20 * 10**6)
    to_svm = route_body((ORIGIN, NATIVE), (SVM_ID, SOL), 10**16, user.address,
                        str(Keypair().pubkey()))  # fmt: skip
    to_perps = route_body((ORIGIN, usdc(devnet, ORIGIN)), (PERPS_ID, PERPS_USDC_ADDRESS),
                          20 * 10**6, user.address, Account.create().address)  # fmt: skip
    with httpx.Client(base_url=service.base_url, timeout=20) as http:
        svm_quote, perps_quote = request_quote(http, to_svm), request_quote(http, to_perps)
        deposit_native(devnet, user, svm_quote, 10**16)
        deposit_usdc(devnet, user, perps_quote, 20 * 10**6)
        for quote in (svm_quote, perps_quote):
            assert final_status(http, quote["steps"][-1]["requestId"])["status"] == "success"
    report = account_for_money(cross_vm_deployment, service.settings.database, since=since)
    assert (report.deposits, report.filled, report.taken_from_records) == (2, 2, 0), report
    assert (report.unsettled, report.unaccounted) == ([], [])


def test_a_withdrawal_from_the_exchange_and_a_wrong_transfer_are_read_from_its_ledger(
    start_service: StartService,
    cross_vm_deployment: Deployment,
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
) -> None:
    since = heads(cross_vm_deployment)
    service = start_service(cross_vm_deployment, run_workers=True, settings=NO_LIMITS)
    user: LocalAccount = Account.create()
    fund(exchange.api_url, user.address, "100")
    body = route_body((PERPS_ID, PERPS_USDC_ADDRESS), (ORIGIN, usdc(devnet, ORIGIN)),
                      25 * 10**6, user.address, user.address, protocolVersion="v2")  # fmt: skip
    with httpx.Client(base_url=service.base_url, timeout=20) as http:
        paid = _withdraw(http, exchange, user, body, amount=None)
        short = _withdraw(http, exchange, user, body, amount="20")
        assert final_status(http, paid)["status"] == "success"
        assert final_status(http, short, until=REFUNDED)["status"] == "refund"
    report = account_for_money(cross_vm_deployment, service.settings.database, since=since)
    assert (report.deposits, report.filled, report.refunded) == (2, 1, 1), report
    assert (report.unsettled, report.unaccounted) == ([], [])


def _withdraw(http: httpx.Client, exchange: ExchangeProcess, user: LocalAccount,
              body: dict[str, Any], *, amount: str | None) -> str:  # fmt: skip
    """Quote, authorize and sign the transfer (of `amount` when given); its request id."""
    authorize, deposit = request_quote(http, body)["steps"]
    item = authorize["items"][0]
    post = item["data"]["post"]
    signature = sign_authorization(user, item, "eth-account")
    answer = http.post(post["endpoint"], params={"signature": signature}, json=post["body"])
    assert answer.status_code == 200, answer.text
    changes: dict[str, Any] = {"amount": amount} if amount is not None else {}
    signed = signed_deposit(user, deposit["items"][0], "eth-account", **changes)
    assert post_to_exchange(exchange, signed)["status"] == "ok"
    return str(deposit["requestId"])
