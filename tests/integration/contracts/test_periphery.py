"""Receiver, Router + ApprovalProxy, Multicaller, OnlyOwnerMulticaller, and devnet seeding."""

from __future__ import annotations

from web3.logs import DISCARD

from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.devnet.seed import POOL_USDC, POOL_WETH, SOLVER_FUNDING, USER_FUNDING
from tests.integration.contracts.conftest import assert_reverts_with, fresh_account, usdc_address


def test_receiver_forwards_ether_to_solver_with_data(chain, web3, solver) -> None:
    sender = fresh_account(web3)
    holder = signing_web3(chain.rpc_url, sender)
    receiver = contract_at(holder, "Receiver", chain.contracts.receiver)
    solver_before = web3.eth.get_balance(solver.address)

    receipt = send(holder, receiver.functions.forward(b"\x01" * 32), value=4242)

    assert web3.eth.get_balance(solver.address) == solver_before + 4242
    (event,) = receiver.events.FundsForwardedWithData().process_receipt(receipt, errors=DISCARD)
    assert event.args["data"] == b"\x01" * 32


def test_receiver_calls_are_solver_only(chain, web3) -> None:
    receiver = contract_at(web3, "Receiver", chain.contracts.receiver)
    assert_reverts_with(
        receiver.functions.makeCalls([]),
        "NotSolver(address)",
        **{"from": fresh_account(web3).address},
    )


def test_approval_proxy_moves_tokens_into_router_batch(chain, web3, user) -> None:
    holder = signing_web3(chain.rpc_url, user)
    usdc = contract_at(holder, "TestUSDC", usdc_address(chain))
    proxy = contract_at(holder, "ApprovalProxy", chain.contracts.approval_proxy)
    recipient = fresh_account(web3, ether=0)
    send(holder, usdc.functions.approve(proxy.address, 1_000_000))
    # The batch, run by the Router, forwards the pulled tokens to the recipient.
    transfer = usdc.encode_abi("transfer", args=[recipient.address, 1_000_000])
    calls = [(usdc.address, False, 0, transfer)]

    send(
        holder,
        proxy.functions.transferAndMulticall(
            [usdc.address], [1_000_000], calls, user.address, user.address, b""
        ),
    )

    assert usdc.functions.balanceOf(recipient.address).call() == 1_000_000
    assert usdc.functions.balanceOf(chain.contracts.router).call() == 0


def test_router_returns_leftover_ether_to_refund_address(chain, web3) -> None:
    sender = fresh_account(web3)
    holder = signing_web3(chain.rpc_url, sender)
    router = contract_at(holder, "Router", chain.contracts.router)
    refund_to = fresh_account(web3, ether=0)
    payee = fresh_account(web3, ether=0)

    send(
        holder,
        router.functions.multicall(
            [(payee.address, False, 300, b"")], refund_to.address, refund_to.address, b""
        ),
        value=1000,
    )

    assert web3.eth.get_balance(payee.address) == 300
    assert web3.eth.get_balance(refund_to.address) == 700


def test_multicaller_aggregate3_reads_in_one_call(chain, web3) -> None:
    multicaller = contract_at(web3, "Multicaller", chain.contracts.multicaller)
    balance_call = multicaller.encode_abi("getChainId", args=[])
    ((ok, returned),) = multicaller.functions.aggregate3(
        [(multicaller.address, False, balance_call)]
    ).call()
    assert ok
    assert int.from_bytes(returned) == chain.id


def test_only_owner_multicaller_refuses_strangers(chain, web3) -> None:
    owner_only = contract_at(web3, "OnlyOwnerMulticaller", chain.contracts.only_owner_multicaller)
    assert_reverts_with(
        owner_only.functions.multicall([], fresh_account(web3).address),
        "Unauthorized(address)",
        **{"from": fresh_account(web3).address},
    )


def test_devnet_pool_and_balances_are_seeded(chain, web3, solver, user) -> None:
    factory = contract_at(web3, "UniswapV2Factory", chain.contracts.uniswap_v2_factory)
    usdc = contract_at(web3, "TestUSDC", usdc_address(chain))
    weth = contract_at(web3, "WETH", chain.contracts.weth)
    pair = contract_at(
        web3, "UniswapV2Pair", factory.functions.getPair(weth.address, usdc.address).call()
    )
    reserve0, reserve1 = pair.functions.getReserves().call()[:2]
    by_token = {pair.functions.token0().call(): reserve0, pair.functions.token1().call(): reserve1}
    weth_reserve, usdc_reserve = by_token[weth.address], by_token[usdc.address]
    # Seeded at $3,000; swaps by other tests on this shared devnet only add their pool fees, so
    # the product never shrinks and the price stays near the seed.
    assert weth_reserve * usdc_reserve >= POOL_WETH * POOL_USDC
    seeded_price = POOL_USDC * 10**18 // POOL_WETH
    assert abs(usdc_reserve * 10**18 // weth_reserve - seeded_price) < seeded_price // 50
    assert usdc.functions.decimals().call() == 6
    assert weth.functions.balanceOf(solver.address).call() >= SOLVER_FUNDING.weth
    assert usdc.functions.allowance(solver.address, chain.contracts.filler).call() > 0
    assert weth.functions.balanceOf(user.address).call() >= USER_FUNDING.weth // 2
