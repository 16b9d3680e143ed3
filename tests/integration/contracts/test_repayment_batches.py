"""Repayment batches on a real chain: one transaction through the Multicaller runs each
deposit's payout on its own (one whose nonce another payout used fails alone, the others pay),
and a batch costs less gas per repaid order than a transaction each."""

from __future__ import annotations

from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.kinds.evm.config import ChainConfig
from crossfill.kinds.evm.receipt_outcomes import executed_payouts
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.integration.contracts.conftest import fresh_account
from tests.support.repayment_batches import deposits_of, send_batch, signed_repayments


def test_a_payout_whose_nonce_was_used_fails_alone_in_its_batch(
    chain: ChainConfig, web3: Web3, allocator: LocalAccount
) -> None:
    recipient = Account.create().address
    sender = fresh_account(web3)
    payouts = signed_repayments(
        chain, deposits_of(chain, NATIVE_EVM_ADDRESS, [10**15, 2 * 10**15, 3 * 10**15]),
        recipient, allocator,
    )  # fmt: skip
    send_batch(chain, sender, payouts[1:2])  # the second deposit paid out first, alone
    assert web3.eth.get_balance(recipient) == 2 * 10**15

    batch = send_batch(chain, sender, payouts)

    assert batch.receipt["status"] == 1
    executed = executed_payouts(batch.receipt["logs"], depository=chain.contracts.depository)
    assert executed == {payouts[0].payout_id, payouts[2].payout_id}
    assert web3.eth.get_balance(recipient) == 6 * 10**15


def test_a_batch_costs_less_gas_per_repaid_order_than_a_transaction_each(
    chain: ChainConfig, web3: Web3, allocator: LocalAccount
) -> None:
    sender = fresh_account(web3)
    payouts = signed_repayments(
        chain, deposits_of(chain, NATIVE_EVM_ADDRESS, [10**15] * 6), sender.address, allocator
    )
    alone = send_batch(chain, sender, payouts[:1])
    batched = send_batch(chain, sender, payouts[1:])
    assert alone.receipt["to"].lower() == chain.contracts.depository.lower()
    assert batched.receipt["to"].lower() == chain.contracts.multicaller.lower()
    assert batched.gas_used / 5 < alone.gas_used
