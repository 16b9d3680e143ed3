"""EIP-7702 authorizations: our recovery of the authority agrees with eth-account's signer."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from eth_account import Account
from hypothesis import given
from hypothesis import strategies as st

from crossfill.domain.gasless import (
    ExecuteOrder,
    ExecutionRefused,
    authorities,
    check_nonces,
    check_sponsorable,
)
from crossfill.domain.set_code import (
    SECP256K1_N,
    Authorization,
    InvalidAuthorization,
    is_delegated,
)
from crossfill.types import Address, ChainId

USER = Account.from_key("0x" + "22" * 32)
DELEGATE = Address("0x" + "42" * 20)


def _signed(account: Any, chain_id: int, nonce: int, address: str = DELEGATE) -> Authorization:
    signed: Any = account.sign_authorization(
        {"chainId": chain_id, "address": address, "nonce": nonce}
    )
    return Authorization(
        chain_id=chain_id,
        address=Address(address),
        nonce=nonce,
        y_parity=signed.y_parity,
        r=signed.r,
        s=signed.s,
    )


@given(
    chain_id=st.integers(min_value=0, max_value=2**256 - 1),
    nonce=st.integers(min_value=0, max_value=2**64 - 1),
    address=st.binary(min_size=20, max_size=20).map(lambda raw: "0x" + raw.hex()),
)
def test_authority_is_the_signer_whatever_the_fields(
    chain_id: int, nonce: int, address: str
) -> None:
    assert _signed(USER, chain_id, nonce, address).authority() == USER.address


def test_high_s_and_bad_parity_are_refused() -> None:
    good = _signed(USER, 1, 0)
    high_s = Authorization(**{**good.__dict__, "s": SECP256K1_N - good.s})
    with pytest.raises(InvalidAuthorization, match="lower half"):
        high_s.authority()
    with pytest.raises(InvalidAuthorization, match="yParity"):
        Authorization(**{**good.__dict__, "y_parity": 2}).authority()


def _order(*entries: Authorization, chain_id: int = 7) -> ExecuteOrder:
    return ExecuteOrder(
        chain_id=ChainId(chain_id),
        to=Address(USER.address),
        data=b"",
        value=0,
        authorizations=entries,
        referrer=None,
        subsidize_fees=False,
        request_id=None,
    )


def test_order_checks_chain_authority_duplicates_and_nonces() -> None:
    assert authorities(_order(_signed(USER, 0, 3))) == [USER.address]
    with pytest.raises(ExecutionRefused, match="chainId must be 0 or 7"):
        authorities(_order(_signed(USER, 8, 3)))
    with pytest.raises(ExecutionRefused, match="not by the called account"):
        authorities(_order(_signed(Account.create(), 7, 0)))
    with pytest.raises(ExecutionRefused, match="a second authorization"):
        authorities(_order(_signed(USER, 7, 3), _signed(USER, 7, 4)))
    order = _order(_signed(USER, 7, 3))
    check_nonces(order, [Address(USER.address)], [3])
    with pytest.raises(ExecutionRefused, match="nonce is 3"):
        check_nonces(order, [Address(USER.address)], [4])


def test_the_sponsor_only_calls_into_delegated_accounts_and_sends_no_ether() -> None:
    delegated = bytes.fromhex("ef0100") + bytes.fromhex("de" * 20)
    check_sponsorable(_order(_signed(USER, 7, 3)), b"", opens_order=False)  # authorized now
    check_sponsorable(_order(), delegated, opens_order=False)  # delegated before
    with pytest.raises(ExecutionRefused, match="not an EIP-7702 delegated account"):
        check_sponsorable(_order(), b"", opens_order=False)  # a plain account
    with pytest.raises(ExecutionRefused, match="not an EIP-7702 delegated account"):
        token = bytes.fromhex("6080604052")
        check_sponsorable(_order(), token, opens_order=False)  # a contract (a token)
    with pytest.raises(ExecutionRefused, match=r"data\.value must be 0"):
        check_sponsorable(replace(_order(), value=1), delegated, opens_order=False)
    # The origin settler's openFor takes only its signer's funds: sent into the contract.
    check_sponsorable(_order(), bytes.fromhex("6080604052"), opens_order=True)
    with pytest.raises(ExecutionRefused, match=r"data\.value must be 0"):
        check_sponsorable(replace(_order(), value=1), b"", opens_order=True)
    assert is_delegated(delegated) and not is_delegated(delegated + b"\x00")
