"""Depository deposits: every form emits its event with the order id."""

from __future__ import annotations

import os

import pytest
from web3 import Web3
from web3.exceptions import ContractLogicError
from web3.logs import DISCARD

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import ChainConfig
from tests.integration.contracts.conftest import (
    assert_reverts_with,
    fresh_account,
    usdc_address,
)

ZERO = "0x0000000000000000000000000000000000000000"


def _order_id() -> bytes:
    return os.urandom(32)


def _funded_with_usdc(chain: ChainConfig, web3: Web3, amount: int):
    account = fresh_account(web3)
    usdc = contract_at(
        signing_web3(chain.rpc_url, accounts.deployer()), "TestUSDC", usdc_address(chain)
    )
    send(usdc.w3, usdc.functions.mint(account.address, amount))
    return account


def test_native_deposit_emits_event_with_id_and_sender_as_depositor(chain, web3) -> None:
    depositor = fresh_account(web3)
    holder = signing_web3(chain.rpc_url, depositor)
    depository = contract_at(holder, "Depository", chain.contracts.depository)
    order_id = _order_id()

    receipt = send(holder, depository.functions.depositNative(ZERO, order_id), value=12345)

    (event,) = depository.events.NativeDeposit().process_receipt(receipt, errors=DISCARD)
    assert event.args == {"from": depositor.address, "amount": 12345, "id": order_id}
    assert web3.eth.get_balance(chain.contracts.depository) >= 12345


def test_native_deposit_credits_the_named_depositor(chain, web3) -> None:
    sender = fresh_account(web3)
    beneficiary = fresh_account(web3, ether=0)
    holder = signing_web3(chain.rpc_url, sender)
    depository = contract_at(holder, "Depository", chain.contracts.depository)

    receipt = send(
        holder, depository.functions.depositNative(beneficiary.address, _order_id()), value=1
    )

    (event,) = depository.events.NativeDeposit().process_receipt(receipt, errors=DISCARD)
    assert event.args["from"] == beneficiary.address


def test_zero_native_deposit_reverts(chain, web3) -> None:
    sender = fresh_account(web3)
    depository = contract_at(web3, "Depository", chain.contracts.depository)
    assert_reverts_with(
        depository.functions.depositNative(ZERO, _order_id()),
        "ZeroAmount()",
        **{"from": sender.address},
    )


def test_plain_ether_transfer_to_depository_reverts(chain, web3) -> None:
    sender = fresh_account(web3)
    with pytest.raises(ContractLogicError):
        web3.eth.call({"from": sender.address, "to": chain.contracts.depository, "value": 1})


def test_erc20_deposit_pulls_amount_and_emits_event(chain, web3) -> None:
    depositor = _funded_with_usdc(chain, web3, 5_000_000)
    holder = signing_web3(chain.rpc_url, depositor)
    usdc = contract_at(holder, "TestUSDC", usdc_address(chain))
    depository = contract_at(holder, "Depository", chain.contracts.depository)
    order_id = _order_id()
    send(holder, usdc.functions.approve(chain.contracts.depository, 3_000_000))

    deposit = depository.get_function_by_signature("depositErc20(address,address,uint256,bytes32)")
    receipt = send(holder, deposit(ZERO, usdc.address, 2_000_000, order_id))

    (event,) = depository.events.Erc20Deposit().process_receipt(receipt, errors=DISCARD)
    assert event.args == {
        "from": depositor.address,
        "token": usdc.address,
        "amount": 2_000_000,
        "id": order_id,
    }
    assert usdc.functions.balanceOf(depositor.address).call() == 3_000_000
    assert (
        usdc.functions.allowance(depositor.address, chain.contracts.depository).call() == 1_000_000
    )


def test_erc20_deposit_of_whole_allowance(chain, web3) -> None:
    depositor = _funded_with_usdc(chain, web3, 5_000_000)
    holder = signing_web3(chain.rpc_url, depositor)
    usdc = contract_at(holder, "TestUSDC", usdc_address(chain))
    depository = contract_at(holder, "Depository", chain.contracts.depository)
    order_id = _order_id()
    send(holder, usdc.functions.approve(chain.contracts.depository, 4_321_000))

    deposit = depository.get_function_by_signature("depositErc20(address,address,bytes32)")
    receipt = send(holder, deposit(ZERO, usdc.address, order_id))

    (event,) = depository.events.Erc20Deposit().process_receipt(receipt, errors=DISCARD)
    assert event.args["amount"] == 4_321_000
    assert event.args["id"] == order_id
    assert usdc.functions.allowance(depositor.address, chain.contracts.depository).call() == 0
