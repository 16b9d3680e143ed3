"""Depository withdrawals: only the allocator's EIP-712 signature, before expiry, once per nonce."""

from __future__ import annotations

import os

from eth_account import Account
from eth_account.signers.local import LocalAccount
from hypothesis import given, settings
from hypothesis import strategies as st
from web3.logs import DISCARD

from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.call_request import (
    CallRequest,
    DepositoryCall,
    sign_call_request,
    struct_hash,
)
from crossfill.kinds.evm.config import ChainConfig
from tests.integration.contracts.conftest import assert_reverts_with, fresh_account

ZERO = "0x0000000000000000000000000000000000000000"


def _fund_depository(chain, web3, wei: int) -> None:
    funder = fresh_account(web3, ether=1 + wei // 10**18)
    holder = signing_web3(chain.rpc_url, funder)
    depository = contract_at(holder, "Depository", chain.contracts.depository)
    send(holder, depository.functions.depositNative(ZERO, os.urandom(32)), value=wei)


def _payout(recipient: str, wei: int, *, expiration: int, nonce: int | None = None) -> CallRequest:
    return CallRequest(
        calls=(DepositoryCall(to=recipient, data=b"", value=wei),),
        nonce=int.from_bytes(os.urandom(8)) if nonce is None else nonce,
        expiration=expiration,
    )


def _sign(signer: LocalAccount, request: CallRequest, chain: ChainConfig) -> bytes:
    return sign_call_request(
        signer, request, chain_id=chain.id, depository=chain.contracts.depository
    )


def _replay_key(request: CallRequest, chain: ChainConfig) -> bytes:
    return struct_hash(request, chain_id=chain.id, depository=chain.contracts.depository)


def _now(web3) -> int:
    return int(web3.eth.get_block("latest")["timestamp"])


def test_python_struct_hash_matches_the_contract(chain, web3) -> None:
    request = _payout(fresh_account(web3, 0).address, 7, expiration=_now(web3) + 600)
    depository = contract_at(web3, "Depository", chain.contracts.depository)
    on_chain = depository.functions.hashCallRequest(request.as_tuple()).call()
    assert on_chain == _replay_key(request, chain)


def test_allocator_signed_request_pays_out_and_cannot_be_replayed(chain, web3, allocator) -> None:
    _fund_depository(chain, web3, 10**18)
    recipient = fresh_account(web3, ether=0)
    relayer = fresh_account(web3)  # anyone may submit a signed request
    holder = signing_web3(chain.rpc_url, relayer)
    depository = contract_at(holder, "Depository", chain.contracts.depository)
    request = _payout(recipient.address, 5 * 10**17, expiration=_now(web3) + 600)
    signature = _sign(allocator, request, chain)

    receipt = send(holder, depository.functions.execute(request.as_tuple(), signature))

    assert web3.eth.get_balance(recipient.address) == 5 * 10**17
    (event,) = depository.events.CallExecuted().process_receipt(receipt, errors=DISCARD)
    assert event.args["id"] == _replay_key(request, chain)
    assert_reverts_with(
        depository.functions.execute(request.as_tuple(), signature),
        "NonceAlreadyUsed(uint256)",
        **{"from": relayer.address},
    )


def test_a_nonce_pays_once_however_often_it_is_signed(chain, web3, allocator) -> None:
    """A refund re-signed with a later expiration and another amount (gas moved) must not
    run beside the first signature, which anyone may still hold and send."""
    _fund_depository(chain, web3, 10**18)
    recipient = fresh_account(web3, ether=0)
    relayer = fresh_account(web3)
    holder = signing_web3(chain.rpc_url, relayer)
    depository = contract_at(holder, "Depository", chain.contracts.depository)
    nonce = int.from_bytes(os.urandom(32))
    first = _payout(recipient.address, 3 * 10**17, expiration=_now(web3) + 600, nonce=nonce)
    again = _payout(recipient.address, 4 * 10**17, expiration=_now(web3) + 3_600, nonce=nonce)
    first_signature, again_signature = (
        _sign(allocator, first, chain),
        _sign(allocator, again, chain),
    )

    send(holder, depository.functions.execute(again.as_tuple(), again_signature))

    assert_reverts_with(
        depository.functions.execute(first.as_tuple(), first_signature),
        "NonceAlreadyUsed(uint256)",
        **{"from": relayer.address},
    )
    assert web3.eth.get_balance(recipient.address) == 4 * 10**17
    assert depository.functions.nonceUsed(nonce).call()


def test_expired_request_reverts(chain, web3, allocator) -> None:
    _fund_depository(chain, web3, 10**15)
    depository = contract_at(web3, "Depository", chain.contracts.depository)
    request = _payout(fresh_account(web3, 0).address, 1, expiration=_now(web3) - 1)
    signature = _sign(allocator, request, chain)
    assert_reverts_with(
        depository.functions.execute(request.as_tuple(), signature),
        "CallRequestExpired(uint256)",
        **{"from": fresh_account(web3).address},
    )


def test_signature_for_another_chain_is_rejected(chain, web3, allocator) -> None:
    _fund_depository(chain, web3, 10**15)
    depository = contract_at(web3, "Depository", chain.contracts.depository)
    request = _payout(fresh_account(web3, 0).address, 1, expiration=_now(web3) + 600)
    signature = sign_call_request(
        allocator, request, chain_id=chain.id + 1, depository=chain.contracts.depository
    )
    assert_reverts_with(
        depository.functions.execute(request.as_tuple(), signature),
        "InvalidSignature()",
        **{"from": fresh_account(web3).address},
    )


private_keys = st.binary(min_size=32, max_size=32).filter(
    lambda key: (
        0 < int.from_bytes(key) < 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
    )
)


@settings(max_examples=25)
@given(
    forger_key=private_keys,
    amount=st.integers(min_value=1, max_value=10**15),
    nonce=st.integers(min_value=0, max_value=2**256 - 1),
    # Calls run in a pending block timestamped after the latest one: keep clear of "now".
    expires_in=st.integers(min_value=-3600, max_value=-1)
    | st.integers(min_value=60, max_value=3600),
    use_allocator=st.booleans(),
)
def test_execute_succeeds_only_for_allocator_unexpired_first_use(
    chain, web3, allocator, forger_key, amount, nonce, expires_in, use_allocator
) -> None:
    signer = allocator if use_allocator else Account.from_key(forger_key)
    depository = contract_at(web3, "Depository", chain.contracts.depository)
    request = _payout(
        fresh_account(web3, 0).address, amount, expiration=_now(web3) + expires_in, nonce=nonce
    )
    signature = _sign(signer, request, chain)
    submitter = fresh_account(web3).address
    call = depository.functions.execute(request.as_tuple(), signature)

    if expires_in < 0:
        assert_reverts_with(call, "CallRequestExpired(uint256)", **{"from": submitter})
    elif signer.address != allocator.address:
        assert_reverts_with(call, "InvalidSignature()", **{"from": submitter})
    else:
        _fund_depository(chain, web3, amount)
        assert call.call({"from": submitter}) == _replay_key(request, chain)


@settings(max_examples=25)
@given(flip_byte=st.integers(min_value=0, max_value=64), flip_bits=st.integers(1, 255))
def test_tampered_signature_never_passes(chain, web3, allocator, flip_byte, flip_bits) -> None:
    depository = contract_at(web3, "Depository", chain.contracts.depository)
    request = _payout(fresh_account(web3, 0).address, 1, expiration=_now(web3) + 600)
    signature = bytearray(_sign(allocator, request, chain))
    signature[flip_byte] ^= flip_bits
    assert_reverts_with(
        depository.functions.execute(request.as_tuple(), bytes(signature)),
        "InvalidSignature()",
        **{"from": fresh_account(web3).address},
    )
