"""The attestation's hash and signature, against an independent encoding and recovery."""

from __future__ import annotations

from eth_account import Account
from eth_account.messages import encode_defunct
from eth_utils.crypto import keccak
from hypothesis import given
from hypothesis import strategies as st
from solders.pubkey import Pubkey

from crossfill.domain.attestation import Attestation

addresses = st.binary(min_size=20, max_size=20).map(lambda raw: "0x" + raw.hex())
SIGNER = Account.from_key("0x" + "11" * 32)


@given(
    request_id=st.binary(min_size=32, max_size=32),
    origin_user=addresses,
    currency=addresses,
    recipient=addresses,
    amount=st.integers(min_value=0, max_value=2**256 - 1),
    chains=st.tuples(st.integers(1, 2**63), st.integers(1, 2**63)),
)
def test_digest_is_keccak_of_seven_words_and_signature_recovers_the_signer(
    request_id: bytes,
    origin_user: str,
    currency: str,
    recipient: str,
    amount: int,
    chains: tuple[int, int],
) -> None:
    attestation = Attestation(
        request_id="0x" + request_id.hex(),
        origin_chain_id=chains[0],
        origin_user=origin_user,
        origin_currency=currency,
        origin_amount=amount,
        destination_chain_id=chains[1],
        destination_user=recipient,
    )
    words = b"".join(
        [
            request_id,
            chains[0].to_bytes(32, "big"),
            bytes(12) + bytes.fromhex(origin_user[2:]),
            bytes(12) + bytes.fromhex(currency[2:]),
            amount.to_bytes(32, "big"),
            chains[1].to_bytes(32, "big"),
            bytes(12) + bytes.fromhex(recipient[2:]),
        ]
    )
    assert attestation.digest() == keccak(words)
    signature = attestation.sign(SIGNER)
    recovered = Account.recover_message(
        encode_defunct(primitive=keccak(words)), signature=signature
    )
    assert recovered == SIGNER.address


@given(
    user=st.binary(min_size=32, max_size=32),
    recipient=addresses,
    amount=st.integers(min_value=0, max_value=2**64 - 1),
)
def test_an_svm_address_is_encoded_as_its_32_bytes(
    user: bytes, recipient: str, amount: int
) -> None:
    svm_user, native_sol = str(Pubkey.from_bytes(user)), "1" * 32
    attestation = Attestation(
        request_id="0x" + "ab" * 32,
        origin_chain_id=792703809,
        origin_user=svm_user,
        origin_currency=native_sol,
        origin_amount=amount,
        destination_chain_id=1,
        destination_user=recipient,
    )
    words = b"".join(
        [
            bytes.fromhex("ab" * 32),
            (792703809).to_bytes(32, "big"),
            user,
            bytes(32),  # the System Program's address: 32 zero bytes
            amount.to_bytes(32, "big"),
            (1).to_bytes(32, "big"),
            bytes(12) + bytes.fromhex(recipient[2:]),
        ]
    )
    assert attestation.digest() == keccak(words)
    assert attestation.request_data()["originUser"] == svm_user  # shown as the chain shows it
