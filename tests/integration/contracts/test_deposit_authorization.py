"""Gasless ERC-20 deposits: an EIP-3009 authorization, its nonce the order id, submitted by
anyone to the Depository, deposits for that order once and for no other."""

from __future__ import annotations

import os

from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.logs import DISCARD

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.deposit_authorization import DepositAuthorization
from crossfill.kinds.evm.config import ChainConfig
from tests.integration.contracts.conftest import (
    assert_reverts_with,
    fresh_account,
    usdc_address,
)

AMOUNT = 7_000_000


def _holder_of_usdc(chain: ChainConfig, web3: Web3) -> LocalAccount:
    account = fresh_account(web3, ether=0)  # no ether: the holder never sends a transaction
    minter = contract_at(
        signing_web3(chain.rpc_url, accounts.deployer()), "TestUSDC", usdc_address(chain)
    )
    send(minter.w3, minter.functions.mint(account.address, AMOUNT))
    return account


def _authorization(chain: ChainConfig, web3: Web3, holder: str, **changes: object):
    now = web3.eth.get_block("latest")["timestamp"]
    fields: dict[str, object] = {
        "chain_id": chain.id,
        "token": usdc_address(chain),
        "token_name": "USD Coin",
        "depositor": holder,
        "depository": chain.contracts.depository,
        "amount": AMOUNT,
        "valid_after": 0,
        "valid_before": now + 600,
        "order_id": "0x" + os.urandom(32).hex(),
        **changes,
    }
    return DepositAuthorization(**fields)  # type: ignore[arg-type]


def _submit_call(chain: ChainConfig, submitter: LocalAccount, auth, signature: bytes):
    depository = contract_at(
        signing_web3(chain.rpc_url, submitter), "Depository", chain.contracts.depository
    )
    return depository, depository.functions.depositErc20WithAuthorization(
        auth.depositor,
        auth.token,
        auth.amount,
        auth.valid_after,
        auth.valid_before,
        bytes.fromhex(auth.order_id[2:]),
        signature,
    )


def test_a_signed_authorization_deposits_for_its_order(chain, web3) -> None:
    holder = _holder_of_usdc(chain, web3)
    auth = _authorization(chain, web3, holder.address)
    signature = auth.sign(bytes(holder.key))
    assert auth.signer(signature) == holder.address
    submitter = fresh_account(web3)
    depository, call = _submit_call(chain, submitter, auth, signature)

    receipt = send(depository.w3, call)

    (event,) = depository.events.Erc20Deposit().process_receipt(receipt, errors=DISCARD)
    assert event.args == {
        "from": holder.address,
        "token": Web3.to_checksum_address(auth.token),
        "amount": AMOUNT,
        "id": bytes.fromhex(auth.order_id[2:]),
    }
    usdc = contract_at(web3, "TestUSDC", auth.token)
    assert usdc.functions.balanceOf(holder.address).call() == 0
    assert web3.eth.get_transaction_count(holder.address) == 0
    # Used once: the same authorization cannot deposit again.
    assert_reverts_with(
        call, "AuthorizationAlreadyUsed(address,bytes32)", **{"from": submitter.address}
    )


def test_an_authorization_cannot_be_spent_on_another_order(chain, web3) -> None:
    holder = _holder_of_usdc(chain, web3)
    auth = _authorization(chain, web3, holder.address)
    signature = auth.sign(bytes(holder.key))
    other_order = _authorization(chain, web3, holder.address, valid_before=auth.valid_before)
    submitter = fresh_account(web3)
    _, call = _submit_call(chain, submitter, other_order, signature)
    assert_reverts_with(call, "InvalidAuthorizationSignature()", **{"from": submitter.address})


def test_an_expired_authorization_is_refused(chain, web3) -> None:
    holder = _holder_of_usdc(chain, web3)
    now = web3.eth.get_block("latest")["timestamp"]
    auth = _authorization(chain, web3, holder.address, valid_before=now - 1)
    submitter = fresh_account(web3)
    _, call = _submit_call(chain, submitter, auth, auth.sign(bytes(holder.key)))
    assert_reverts_with(call, "AuthorizationExpired(uint256)", **{"from": submitter.address})


def test_only_the_payee_executes_an_authorization(chain, web3) -> None:
    holder = _holder_of_usdc(chain, web3)
    auth = _authorization(chain, web3, holder.address)
    signature = auth.sign(bytes(holder.key))
    thief = fresh_account(web3)
    usdc = contract_at(signing_web3(chain.rpc_url, thief), "TestUSDC", auth.token)
    call = usdc.functions.receiveWithAuthorization(
        auth.depositor,
        auth.depository,
        auth.amount,
        auth.valid_after,
        auth.valid_before,
        bytes.fromhex(auth.order_id[2:]),
        signature[64],
        signature[:32],
        signature[32:64],
    )
    assert_reverts_with(call, "CallerNotPayee(address,address)", **{"from": thief.address})
