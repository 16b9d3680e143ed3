"""The money invariant, checked from the chains' own ledgers: every unit that reached the
service for an order since a starting point is matched by exactly one outcome, and no fill or
payout is matched by none.

    report = account_for_money(deployment, database_url, since=heads(deployment))

`since` is keyed by chain id: an EVM chain's first block, an SVM chain's first slot, the perps
exchange's (1337) first ledger time in milliseconds; a chain it does not name is read from its
beginning.

An outcome is one of: a fill of its order (on its destination, read from that chain; the deposit
then repaid to the solver or still held for it, neither escrow owed to the user nor lost), a refund
of it (a payment the chain shows succeeded, paying back what the service says it paid, in the
deposit's currency; on the EVM chains the gas it kept is the difference), or a record that it
was kept with the reason (too small to return, a currency not served, a refusal for good).
The service's tables are read only for what the chains do not say: which part of a deposit
paid for which request, where it says it refunded it, why it kept it, and which of its payments
off the EVM chains are fills (their payers' journals). Their word is checked against the chain
wherever the chain can check it. Per kind of chain (`tests/money/`):

- EVM (`evm`): the Depository's deposits, token transfers into it naming an order (implicit
  deposits), the Receiver's forwarded ether (v1); fills are the Filler's `OrderFilled`;
  payouts the Depository's `CallExecuted`, each one a recorded refund, app-fee claim or
  repayment (a repayment transaction pays the solver exactly the deposits recorded repaid by
  it); a deposit kept must have its payout nonce unused, and a filled one too unless it was
  repaid to the solver (then it must be used, and the fill must be there). Deposit addresses
  hold exactly what their records leave there (`deposit_addresses`).
- SVM (`svm`): transfers into the vault (SOL, or any token account it owns) in successful
  transactions, with their memo's order id; every payment out of the vault is a journalled
  fill paying the quoted output to the recipient, or a recorded refund paying the depositor.
- The perps exchange (`perps`): transfers into the solver's account in its own ledger; every
  transfer out is a journalled fill paying the quoted output to the recipient, or a recorded
  refund paying the depositor (or `refundTo`).

A fill is matched to its order by the chain (`OrderFilled`'s order id) on the EVM chains and by
the payer's journal (which request a signed payment is for) off them: an SVM payment or an
exchange transfer names no order the chain would check. Only fills to a chain outside the
deployment given are taken from the records (counted as such).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping

from web3 import Web3

from crossfill.config import Deployment
from crossfill.kinds.evm.config import evm_chains
from crossfill.kinds.perps.config import perps_exchange
from crossfill.kinds.svm.config import svm_chains
from tests.money.deposit_addresses import account_deposit_addresses
from tests.money.evm import EvmLedger, web3_of
from tests.money.ledger import ChainLedger, MoneyReport, account
from tests.money.perps import ExchangeAccountLedger, ledger_head
from tests.money.records import read_records
from tests.money.svm import SvmVaultLedger, next_slot

__all__ = ["MoneyReport", "account_for_money", "heads", "wait_until_accounted"]


def account_for_money(
    deployment: Deployment, database_url: str, *, since: Mapping[int, int]
) -> MoneyReport:
    """The invariant over each chain from `since[chain_id]` to what it shows now."""
    web3s: dict[int, Web3] = {chain.id: web3_of(chain) for chain in evm_chains(deployment)}
    ledgers: dict[int, ChainLedger] = {}
    for chain in evm_chains(deployment):
        web3 = web3s[chain.id]
        ledgers[chain.id] = EvmLedger(
            chain,
            web3,
            since.get(chain.id, 0),
            web3.eth.block_number,
            solver=deployment.solver.address,
        )
    for svm in svm_chains(deployment):
        ledgers[svm.id] = SvmVaultLedger(svm, since.get(svm.id, 0))
    perps = perps_exchange(deployment)
    if perps is not None:
        ledgers[perps.id] = ExchangeAccountLedger(perps, since.get(perps.id, 0))
    # Read after the chains: every payment they show was journalled before it was sent.
    records = asyncio.run(read_records(database_url))
    report = MoneyReport()
    account(ledgers, records, report)
    account_deposit_addresses(web3s, deployment, records, report)
    return report


def heads(deployment: Deployment) -> dict[int, int]:
    """Where a check of what follows starts on each chain: the next block, the next slot (once
    it has begun), the exchange's time past its newest entry for the solver."""
    starts: dict[int, int] = {
        chain.id: web3_of(chain).eth.block_number + 1 for chain in evm_chains(deployment)
    }
    starts |= {svm.id: next_slot(svm) for svm in svm_chains(deployment)}
    perps = perps_exchange(deployment)
    if perps is not None:
        starts[perps.id] = ledger_head(perps)
    return starts


def wait_until_accounted(
    check: Callable[[], MoneyReport], *, timeout: float, interval: float = 1.0
) -> MoneyReport:
    """The report once nothing is unsettled (or the timeout passed): what a test asserts on."""
    deadline = time.monotonic() + timeout
    report = check()
    while report.unsettled and time.monotonic() < deadline:
        time.sleep(interval)
        report = check()
    return report
