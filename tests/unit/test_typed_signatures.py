"""Signed statements (a nonce mapping, an app-fee claim) take one signature per signer: the
high-s twin of a valid signature, which recovers the same signer, is refused."""

from __future__ import annotations

import pytest
from eth_account import Account
from eth_account.messages import SignableMessage, encode_typed_data

from crossfill.domain.app_fee_claim import CLAIM_TYPES, ClaimTerms, InvalidClaimSignature
from crossfill.domain.app_fee_claim import PRIMARY_TYPE as CLAIM_PRIMARY_TYPE
from crossfill.domain.nonce_mapping import (
    NONCE_MAPPING_TYPES,
    PRIMARY_TYPE,
    InvalidMappingSignature,
    NonceMapping,
)
from crossfill.domain.set_code import SECP256K1_N
from crossfill.domain.typed_signatures import UnrecoverableSignature, signer_of
from crossfill.types import Address, ChainId

WALLET = Account.create()


def _high_s_twin(signature: str) -> str:
    """The same signature with s -> n - s and the recovery bit flipped: the same signer."""
    raw = bytes.fromhex(signature[2:])
    r, s, v = raw[:32], int.from_bytes(raw[32:64], "big"), raw[64]
    flipped = {27: 28, 28: 27, 0: 1, 1: 0}[v]
    return "0x" + (r + (SECP256K1_N - s).to_bytes(32, "big") + bytes([flipped])).hex()


def _mapping() -> NonceMapping:
    return NonceMapping(
        wallet_chain_id=ChainId(1337),
        wallet=Address(WALLET.address),
        depositor=Address(WALLET.address),
        request_id="0x" + "ab" * 32,
        nonce=7,
        signature_chain_id=ChainId(1),
    )


def _mapping_signable(mapping: NonceMapping) -> SignableMessage:
    full = {
        "domain": mapping.domain(),
        "types": NONCE_MAPPING_TYPES,
        "primaryType": PRIMARY_TYPE,
        "message": mapping.message(),
    }
    return encode_typed_data(full_message=full)


def _signed_mapping(mapping: NonceMapping) -> str:
    return "0x" + bytes(WALLET.sign_message(_mapping_signable(mapping)).signature).hex()


def test_the_high_s_twin_recovers_the_same_signer_without_the_rule() -> None:
    """What the rule is for: eth-account alone takes either spelling."""
    mapping = _mapping()
    low = _signed_mapping(mapping)
    signable = _mapping_signable(mapping)
    twin = _high_s_twin(low)
    assert Account.recover_message(signable, signature=twin) == WALLET.address
    assert signer_of(signable, low) == WALLET.address
    with pytest.raises(UnrecoverableSignature, match="lower half"):
        signer_of(signable, twin)


def test_a_nonce_mapping_refuses_the_high_s_twin_of_its_signature() -> None:
    mapping = _mapping()
    low = _signed_mapping(mapping)
    mapping.check_signature(low)
    with pytest.raises(InvalidMappingSignature, match="lower half"):
        mapping.check_signature(_high_s_twin(low))


def test_an_app_fee_claim_refuses_the_high_s_twin_of_its_signature() -> None:
    terms = ClaimTerms(
        wallet=Address(WALLET.address),
        recipient=Address(WALLET.address),
        chain_id=1,
        currency=Address("0x" + "00" * 20),
        amount=10**6,
        through_fee_id=3,
        expiry=2_000_000_000,
    )
    full = {
        "domain": terms.domain(),
        "types": CLAIM_TYPES,
        "primaryType": CLAIM_PRIMARY_TYPE,
        "message": terms.message(),
    }
    signed = WALLET.sign_message(encode_typed_data(full_message=full))
    low = "0x" + bytes(signed.signature).hex()
    terms.check_signature(low)
    with pytest.raises(InvalidClaimSignature, match="lower half"):
        terms.check_signature(_high_s_twin(low))
