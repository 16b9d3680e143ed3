"""Filler: only the solver fills, each orderId at most once, calls run through the Router."""

from __future__ import annotations

import os

from eth_account.signers.local import LocalAccount
from hypothesis import given, settings
from hypothesis import strategies as st
from web3 import Web3
from web3.contract import Contract
from web3.logs import DISCARD
from web3.types import Wei

from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import ChainConfig
from tests.integration.contracts.conftest import assert_reverts_with, fresh_account, usdc_address

NATIVE = "0x0000000000000000000000000000000000000000"


def _filler(chain: ChainConfig, account: LocalAccount) -> tuple[Web3, Contract]:
    holder = signing_web3(chain.rpc_url, account)
    return holder, contract_at(holder, "Filler", chain.contracts.filler)


def test_native_fill_pays_recipient_and_second_fill_of_same_order_reverts(
    chain, web3, solver
) -> None:
    holder, filler = _filler(chain, solver)
    recipient = fresh_account(web3, ether=0)
    order_id = os.urandom(32)
    payment = [(recipient.address, NATIVE, 10**16)]

    receipt = send(holder, filler.functions.fill(order_id, payment, []), value=10**16)

    assert web3.eth.get_balance(recipient.address) == 10**16
    assert filler.functions.filled(order_id).call()
    (event,) = filler.events.OrderFilled().process_receipt(receipt, errors=DISCARD)
    assert event.args == {"orderId": order_id, "solver": solver.address}
    assert_reverts_with(
        filler.functions.fill(order_id, payment, []),
        "AlreadyFilled(bytes32)",
        **{"from": solver.address, "value": 10**16},
    )


def test_second_fill_reverts_on_chain_even_when_sent_without_simulation(
    chain, web3, solver
) -> None:
    holder, filler = _filler(chain, solver)
    recipient = fresh_account(web3, ether=0)
    order_id = os.urandom(32)
    payment = [(recipient.address, NATIVE, 1000)]
    send(holder, filler.functions.fill(order_id, payment, []), value=1000)

    # An explicit gas limit skips estimation, so the transaction is mined and must revert there.
    tx_hash = filler.functions.fill(order_id, payment, []).transact(
        {"value": Wei(1000), "gas": 200_000}
    )
    receipt = web3.eth.wait_for_transaction_receipt(tx_hash)

    assert receipt["status"] == 0
    assert web3.eth.get_balance(recipient.address) == 1000


def test_calldata_suffix_with_order_id_is_accepted(chain, web3, solver) -> None:
    holder, filler = _filler(chain, solver)
    recipient = fresh_account(web3, ether=0)
    order_id = os.urandom(32)
    calldata = filler.encode_abi("fill", args=[order_id, [(recipient.address, NATIVE, 5)], []])
    tagged = bytes.fromhex(calldata[2:]) + order_id

    tx_hash = holder.eth.send_transaction(
        {"from": solver.address, "to": filler.address, "data": tagged, "value": Wei(5)}
    )
    receipt = web3.eth.wait_for_transaction_receipt(tx_hash)

    assert receipt["status"] == 1
    assert web3.eth.get_transaction(tx_hash)["input"][-32:] == order_id
    assert filler.functions.filled(order_id).call()


def test_erc20_fill_pulls_from_solver_inventory(chain, web3, solver) -> None:
    holder, filler = _filler(chain, solver)
    usdc = contract_at(web3, "TestUSDC", usdc_address(chain))
    recipient = fresh_account(web3, ether=0)
    solver_before = usdc.functions.balanceOf(solver.address).call()

    send(
        holder,
        filler.functions.fill(os.urandom(32), [(recipient.address, usdc.address, 2_500_000)], []),
    )

    assert usdc.functions.balanceOf(recipient.address).call() == 2_500_000
    assert usdc.functions.balanceOf(solver.address).call() == solver_before - 2_500_000


def test_fill_runs_calls_through_the_router(chain, web3, solver) -> None:
    holder, filler = _filler(chain, solver)
    payee = fresh_account(web3, ether=0)
    called = fresh_account(web3, ether=0)
    call = (called.address, False, 777, b"")

    send(
        holder,
        filler.functions.fill(os.urandom(32), [(payee.address, NATIVE, 5)], [call]),
        value=782,
    )

    assert web3.eth.get_balance(payee.address) == 5
    assert web3.eth.get_balance(called.address) == 777


def test_fill_with_wrong_native_value_reverts(chain, web3, solver) -> None:
    _, filler = _filler(chain, solver)
    recipient = fresh_account(web3, ether=0)
    assert_reverts_with(
        filler.functions.fill(os.urandom(32), [(recipient.address, NATIVE, 100)], []),
        "NativeValueMismatch(uint256,uint256)",
        **{"from": solver.address, "value": 101},
    )


@settings(max_examples=30)
@given(
    order_id=st.binary(min_size=32, max_size=32),
    amount=st.integers(min_value=0, max_value=10**18),
    caller_is_solver=st.booleans(),
)
def test_fill_guard(chain, web3, solver, order_id, amount, caller_is_solver) -> None:
    """Whatever the order and amount: strangers never fill; the solver fills each id once."""
    holder, filler = _filler(chain, solver)
    recipient = fresh_account(web3, ether=0).address
    payment = [(recipient, NATIVE, amount)]
    if not caller_is_solver:
        stranger = fresh_account(web3, ether=2)
        assert_reverts_with(
            filler.functions.fill(order_id, payment, []),
            "NotSolver(address)",
            **{"from": stranger.address, "value": amount},
        )
        return
    if not filler.functions.filled(order_id).call():  # Hypothesis may repeat an id
        send(holder, filler.functions.fill(order_id, payment, []), value=amount)
        assert web3.eth.get_balance(recipient) == amount
    assert_reverts_with(
        filler.functions.fill(order_id, payment, []),
        "AlreadyFilled(bytes32)",
        **{"from": solver.address, "value": amount},
    )
