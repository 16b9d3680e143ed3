"""What the repayment tests share: a deployment that repays at once (fills final only a few
blocks deep on the destination), the repayments the service recorded, and the payouts the
origin Depository shows on chain."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eth_abi.abi import decode
from sqlalchemy import select
from web3 import Web3

from crossfill.config import Deployment, RepaymentSettings
from crossfill.contracts.abi import ERC20, function
from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at
from crossfill.domain.confirmations import ConfirmationTier
from crossfill.kinds.evm.config import evm_chain, evm_chains
from crossfill.store.tables import Repayment
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, rpc_urls
from tests.support.database import rows_in
from tests.support.waiting import wait_for

# Any owed deposit is due at once: no waiting for a fuller batch.
REPAY_AT_ONCE = RepaymentSettings(max_age_seconds=0, min_batch_value_usd=0)
# Blocks a fill needs on the destination before its deposit is repaid, in these tests (the
# devnet's own tiers ask one block of an order this small: final as soon as it is mined).
FINAL_AT = 3


def repaying(
    deployment: Deployment,
    *,
    final_at: int = FINAL_AT,
    repayment: RepaymentSettings = REPAY_AT_ONCE,
) -> Deployment:
    """`deployment` repaying as `repayment` says, its destination's fills final `final_at`
    blocks deep."""
    tiers = (ConfirmationTier(blocks=final_at),)
    chains = tuple(
        chain.model_copy(update={"confirmations": tiers}) if chain.id == DESTINATION else chain
        for chain in evm_chains(deployment)
    )
    return deployment.model_copy(update={"chains": chains, "repayment": repayment})


def repayments(database_url: str) -> list[Repayment]:
    return rows_in(database_url, select(Repayment).order_by(Repayment.id))


@dataclass(frozen=True)
class Payout:
    """One call the origin Depository executed: what it paid whom, in which currency."""

    tx_hash: str
    payout_id: str
    recipient: str
    currency: str
    amount: int


def depository_payouts(devnet: RunningDevnet, *, since: int = 0) -> list[Payout]:
    """Every payout of the origin Depository since block `since`, read from its events."""
    origin = evm_chain(devnet.deployment, ORIGIN)
    assert origin is not None
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    depository = contract_at(web3, "Depository", origin.contracts.depository)
    return [
        _payout(event.transactionHash.to_0x_hex(), bytes(event.args["id"]), event.args["call"])
        for event in depository.events.CallExecuted().get_logs(from_block=since)
    ]


def _payout(tx_hash: str, payout_id: bytes, call: Any) -> Payout:
    to, data, value = (
        (call["to"], call["data"], call["value"]) if isinstance(call, Mapping) else call[:3]
    )
    data = bytes(data)
    if not data:
        return Payout(tx_hash, "0x" + payout_id.hex(), str(to).lower(), NATIVE, int(value))
    recipient, amount = decode(["address", "uint256"], data[4:])
    assert data[:4] == function(ERC20, "transfer").selector
    return Payout(tx_hash, "0x" + payout_id.hex(), str(recipient).lower(), str(to).lower(), amount)


def repaid_to_solver(devnet: RunningDevnet, database_url: str, request_id: str) -> Payout:
    """The origin Depository's one payout to the solver of `request_id`'s deposit, once its
    repayment is recorded repaid (waited for); the payout as the chain's events show it."""
    solver = accounts.solver().address.lower()

    def repaid() -> Repayment | None:
        rows = [row for row in repayments(database_url) if row.request_id == request_id]
        assert len(rows) <= 1, "a deposit is repaid once"
        return rows[0] if rows and rows[0].state == "repaid" else None

    assert wait_for(lambda: repaid() is not None, timeout=60, interval=0.25)
    row = repaid()
    assert row is not None and row.tx_hash is not None
    # Its repayment transaction may pay other deposits owed too (a batch): its payout is the
    # one of its amount and currency to the solver.
    paid = [
        payout
        for payout in depository_payouts(devnet)
        if payout.tx_hash == row.tx_hash
        and (payout.currency, payout.amount) == (row.currency.lower(), int(row.amount))
    ]
    assert paid, (row, depository_payouts(devnet))
    assert all(payout.recipient == solver for payout in paid)
    return paid[0]
