"""Repayment batches sent straight to a devnet chain, as the repayer builds them
(`app.repayments`): deposits made into the Depository, then each paid to a recipient by its
own payout, one transaction per payout or one through the Multicaller. For the contract test
of batches and the gas figures (`bench/repayment_gas.py`)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.app.repayments import SignedRepayment, batch_call, sign_repayment
from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import ChainConfig
from crossfill.store.tables import Deposit, Repayment
from crossfill.types import NATIVE_EVM_ADDRESS

# The Depository's `depositor` meaning the sender.
ZERO = "0x" + "00" * 20


@dataclass(frozen=True)
class SentBatch:
    receipt: dict[str, Any]
    payouts: list[SignedRepayment]

    @property
    def gas_used(self) -> int:
        return int(self.receipt["gasUsed"])


def deposits_of(chain: ChainConfig, currency: str, amounts: list[int]) -> list[Deposit]:
    """One Depository deposit of each amount, made by the deployer; their rows as the indexer
    would have recorded them (each with a deposit transaction and log of its own)."""
    web3 = signing_web3(chain.rpc_url, accounts.deployer())
    depository = contract_at(web3, "Depository", chain.contracts.depository)
    native = currency == NATIVE_EVM_ADDRESS
    if not native:
        token = contract_at(web3, "TestUSDC", currency)
        send(web3, token.functions.mint(accounts.deployer().address, sum(amounts)))
        send(web3, token.functions.approve(chain.contracts.depository, sum(amounts)))
    made = []
    for index, amount in enumerate(amounts):
        order_id = os.urandom(32)
        deposit = (
            depository.functions.depositNative(ZERO, order_id)
            if native
            else depository.functions.depositErc20(ZERO, currency, amount, order_id)
        )
        receipt = send(web3, deposit, value=amount if native else 0)
        made.append(
            Deposit(
                id=index + 1,
                tx_hash=receipt["transactionHash"].to_0x_hex(),
                log_index=0,
                part=0,
                currency=currency.lower(),
                amount=str(amount),
            )
        )
    return made


def signed_repayments(
    chain: ChainConfig, deposits: list[Deposit], recipient: str, allocator: LocalAccount
) -> list[SignedRepayment]:
    """Each deposit's payout of all of it to `recipient`, signed, valid for an hour."""
    expiration = int(time.time()) + 3600
    return [
        sign_repayment(
            deposit,
            Repayment(
                id=deposit.id, deposit_id=deposit.id, amount=deposit.amount, recipient=recipient
            ),
            allocator,
            expiration=expiration,
            chain_id=chain.id,
            depository=chain.contracts.depository,
        )
        for deposit in deposits
    ]


def send_batch(
    chain: ChainConfig, sender: LocalAccount, payouts: list[SignedRepayment]
) -> SentBatch:
    """The payouts in one transaction from `sender`, as the repayer sends them."""
    call = batch_call(
        payouts, depository=chain.contracts.depository, multicaller=chain.contracts.multicaller
    )
    web3 = signing_web3(chain.rpc_url, sender)
    tx_hash = web3.eth.send_transaction(
        {"from": sender.address, "to": Web3.to_checksum_address(call.to), "data": call.data}
    )
    receipt = dict(web3.eth.wait_for_transaction_receipt(tx_hash, timeout=60))
    return SentBatch(receipt, payouts)
