"""SolverBond: a solver bonds and withdraws its own (after the delay), only the allocator
debits, never more than bonded (the withdrawal on its way out included)."""

from __future__ import annotations

import os

from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract

from crossfill.devnet.deploy import contract_at, deploy, send, signing_web3
from crossfill.kinds.evm.config import ChainConfig
from tests.integration.contracts.conftest import assert_reverts_with, fresh_account

NATIVE = "0x0000000000000000000000000000000000000000"
ETHER = 10**18


def _bond(chain: ChainConfig, account: LocalAccount, address: str | None = None) -> Contract:
    holder = signing_web3(chain.rpc_url, account)
    assert chain.contracts.solver_bond is not None
    return contract_at(holder, "SolverBond", address or chain.contracts.solver_bond)


def _deposit(
    chain: ChainConfig, solver: LocalAccount, wei: int, address: str | None = None
) -> None:
    bond = _bond(chain, solver, address)
    send(bond.w3, bond.functions.deposit(NATIVE, wei), value=wei)


def test_a_bond_is_held_and_its_withdrawal_waits_for_the_delay(
    chain: ChainConfig, web3: Web3
) -> None:
    solver = fresh_account(web3)
    bond = _bond(chain, solver)
    _deposit(chain, solver, 2 * ETHER)
    assert bond.functions.bondOf(solver.address, NATIVE).call() == 2 * ETHER
    send(bond.w3, bond.functions.requestWithdrawal(NATIVE, ETHER))
    # Out of the bond the service counts at once; not yet the solver's.
    assert bond.functions.bondOf(solver.address, NATIVE).call() == ETHER
    amount, unlocks_at = bond.functions.pendingWithdrawal(solver.address, NATIVE).call()
    assert amount == ETHER
    assert_reverts_with(
        bond.functions.withdraw(NATIVE), "StillLocked(uint256)", **{"from": solver.address}
    )
    assert unlocks_at > web3.eth.get_block("latest")["timestamp"]
    assert_reverts_with(
        bond.functions.requestWithdrawal(NATIVE, 2 * ETHER),
        "BondTooSmall(uint256,uint256)",
        **{"from": solver.address},
    )


def test_without_a_delay_a_withdrawal_pays_the_solver(
    chain: ChainConfig, web3: Web3, allocator: LocalAccount
) -> None:
    owner = fresh_account(web3)
    address = deploy(signing_web3(chain.rpc_url, owner), "SolverBond", allocator.address, 0)
    solver = fresh_account(web3)
    bond = _bond(chain, solver, address)
    _deposit(chain, solver, ETHER, address)
    send(bond.w3, bond.functions.requestWithdrawal(NATIVE, ETHER))
    before = web3.eth.get_balance(solver.address)
    receipt = send(bond.w3, bond.functions.withdraw(NATIVE))
    fee = receipt["gasUsed"] * receipt["effectiveGasPrice"]
    assert web3.eth.get_balance(solver.address) == before + ETHER - fee
    assert bond.functions.pendingWithdrawal(solver.address, NATIVE).call()[0] == 0


def test_only_the_allocator_debits_and_never_more_than_bonded(
    chain: ChainConfig, web3: Web3, allocator: LocalAccount
) -> None:
    solver, stranger, paid = fresh_account(web3), fresh_account(web3), fresh_account(web3, 0)
    _deposit(chain, solver, 2 * ETHER)
    send(_bond(chain, solver).w3, _bond(chain, solver).functions.requestWithdrawal(NATIVE, ETHER))
    order_id = os.urandom(32)
    debit = _bond(chain, stranger).functions.debit(
        solver.address, NATIVE, ETHER, paid.address, order_id
    )
    assert_reverts_with(debit, "NotAllocator(address)", **{"from": stranger.address})
    by_allocator = _bond(chain, allocator)
    too_much = by_allocator.functions.debit(
        solver.address, NATIVE, 2 * ETHER + 1, paid.address, order_id
    )
    assert_reverts_with(too_much, "BondTooSmall(uint256,uint256)", **{"from": allocator.address})
    # The bond first, then the withdrawal on its way out.
    send(
        by_allocator.w3,
        by_allocator.functions.debit(
            solver.address, NATIVE, ETHER + ETHER // 2, paid.address, order_id
        ),
    )
    assert web3.eth.get_balance(paid.address) == ETHER + ETHER // 2
    assert by_allocator.functions.bondOf(solver.address, NATIVE).call() == 0
    assert by_allocator.functions.pendingWithdrawal(solver.address, NATIVE).call()[0] == ETHER // 2
