"""The ERC-7683 settlers on anvil: `openFor` takes only the user's signature, once, before its
open deadline, and deposits the input into the Depository under the order id; `open` gives
each order of a user its own id; the destination settler pays an order's output once."""

from __future__ import annotations

import time
from typing import Any

from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.logs import DISCARD

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.erc7683 import ORDER_DATA_TYPE, CrossfillOrderData, OriginData
from crossfill.kinds.evm.config import ChainConfig
from tests.integration.contracts.conftest import (
    as_account,
    assert_reverts_with,
    fresh_account,
    usdc_address,
)
from tests.support.erc7683 import gasless_order_tuple, sign_gasless_order

USDC = 10**6


def _settlers(chain: ChainConfig) -> tuple[str, str]:
    origin = chain.contracts.erc7683_origin_settler
    destination = chain.contracts.erc7683_destination_settler
    assert origin is not None and destination is not None
    return origin, destination


def _user_with_usdc(chain: ChainConfig, web3: Web3, amount: int) -> LocalAccount:
    user = fresh_account(web3)
    minter = contract_at(
        signing_web3(chain.rpc_url, accounts.deployer()), "TestUSDC", usdc_address(chain)
    )
    send(minter.w3, minter.functions.mint(user.address, amount))
    token = as_account(chain, user, "TestUSDC", usdc_address(chain))
    send(token.w3, token.functions.approve(_settlers(chain)[0], amount))
    return user


def _order_data(chain: ChainConfig, amount: int) -> bytes:
    return CrossfillOrderData(
        input_token=usdc_address(chain),
        input_amount=amount,
        destination_chain_id=900002,
        destination_settler=_settlers(chain)[1],
        output_token=usdc_address(chain),
        output_amount=amount // 2,
        recipient=Account.create().address,
    ).encode()


def _gasless(chain: ChainConfig, user: LocalAccount, nonce: int, **fields: Any) -> dict[str, Any]:
    now = int(time.time())
    return {
        "originSettler": _settlers(chain)[0],
        "user": user.address,
        "nonce": nonce,
        "originChainId": chain.id,
        "openDeadline": now + 600,
        "fillDeadline": now + 3600,
        "orderDataType": ORDER_DATA_TYPE,
        "orderData": _order_data(chain, 10 * USDC),
        **fields,
    }


def test_open_for_deposits_the_input_under_the_resolved_order_id(chain, web3) -> None:
    user = _user_with_usdc(chain, web3, 10 * USDC)
    relayer = fresh_account(web3)
    settler = as_account(chain, relayer, "CrossfillOriginSettler", _settlers(chain)[0])
    order = _gasless(chain, user, nonce=7)
    resolved = settler.functions.resolveFor(gasless_order_tuple(order), b"").call()
    receipt = send(
        settler.w3,
        settler.functions.openFor(gasless_order_tuple(order), sign_gasless_order(user, order), b""),
    )
    (opened,) = settler.events.Open().process_receipt(receipt, errors=DISCARD)
    assert opened.args["orderId"] == resolved[4]
    depository = contract_at(web3, "Depository", chain.contracts.depository)
    (deposit,) = depository.events.Erc20Deposit().process_receipt(receipt, errors=DISCARD)
    assert deposit.args["id"] == resolved[4]
    assert deposit.args["from"] == user.address
    assert deposit.args["amount"] == 10 * USDC
    token = contract_at(web3, "TestUSDC", usdc_address(chain))
    assert token.functions.balanceOf(user.address).call() == 0
    assert token.functions.balanceOf(settler.address).call() == 0


def test_open_for_refuses_another_signer_a_replay_and_a_late_open(chain, web3) -> None:
    user = _user_with_usdc(chain, web3, 30 * USDC)
    settler = as_account(chain, fresh_account(web3), "CrossfillOriginSettler", _settlers(chain)[0])
    sender = {"from": settler.w3.eth.default_account}
    order = _gasless(chain, user, nonce=1)
    stranger = Account.create()
    assert_reverts_with(
        settler.functions.openFor(
            gasless_order_tuple(order), sign_gasless_order(stranger, order), b""
        ),
        "InvalidSignature()",
        **sender,
    )
    signature = sign_gasless_order(user, order)
    send(settler.w3, settler.functions.openFor(gasless_order_tuple(order), signature, b""))
    assert_reverts_with(
        settler.functions.openFor(gasless_order_tuple(order), signature, b""),
        "NonceAlreadyUsed(address,uint256)",
        **sender,
    )
    late = _gasless(chain, user, nonce=2, openDeadline=int(time.time()) - 1)
    assert_reverts_with(
        settler.functions.openFor(gasless_order_tuple(late), sign_gasless_order(user, late), b""),
        "OpenDeadlinePassed(uint32)",
        **sender,
    )
    # A signature binds every field: another nonce, and the signature no longer holds.
    tampered = {**order, "nonce": 3}
    assert_reverts_with(
        settler.functions.openFor(gasless_order_tuple(tampered), signature, b""),
        "InvalidSignature()",
        **sender,
    )


def test_open_gives_each_order_of_a_user_its_own_id(chain, web3) -> None:
    user = _user_with_usdc(chain, web3, 20 * USDC)
    settler = as_account(chain, user, "CrossfillOriginSettler", _settlers(chain)[0])
    order = (int(time.time()) + 3600, ORDER_DATA_TYPE, _order_data(chain, 10 * USDC))
    ids = []
    for _ in range(2):
        expected = settler.functions.resolve(order).call({"from": user.address})[4]
        receipt = send(settler.w3, settler.functions.open(order))
        (opened,) = settler.events.Open().process_receipt(receipt, errors=DISCARD)
        assert opened.args["orderId"] == expected
        ids.append(expected)
    assert ids[0] != ids[1]


def test_destination_settler_pays_an_order_once(chain, web3) -> None:
    filler = _user_with_usdc(chain, web3, 10 * USDC)
    settler_address = _settlers(chain)[1]
    token = as_account(chain, filler, "TestUSDC", usdc_address(chain))
    send(token.w3, token.functions.approve(settler_address, 10 * USDC))
    settler = as_account(chain, filler, "CrossfillDestinationSettler", settler_address)
    recipient = Account.create().address
    deadline = int(time.time()) + 600
    origin_data = OriginData(usdc_address(chain), 2 * USDC, recipient, chain.id, deadline).encode()
    order_id = b"\x42" * 32
    send(settler.w3, settler.functions.fill(order_id, origin_data, b""))
    assert token.functions.balanceOf(recipient).call() == 2 * USDC
    sender = {"from": filler.address}
    assert_reverts_with(
        settler.functions.fill(order_id, origin_data, b""), "AlreadyFilled(bytes32)", **sender
    )
    elsewhere = OriginData(usdc_address(chain), USDC, recipient, 1, deadline).encode()
    assert_reverts_with(
        settler.functions.fill(order_id, elsewhere, b""), "WrongChain(uint256)", **sender
    )
    late = OriginData(usdc_address(chain), USDC, recipient, chain.id, 1).encode()
    assert_reverts_with(
        settler.functions.fill(b"\x43" * 32, late, b""), "FillDeadlinePassed(uint32)", **sender
    )
