"""A node's refusal of a signed transaction, read once at the chain client into its kind:
what the transaction manager acts on never depends on searching an error's text."""

from __future__ import annotations

import pytest

from crossfill.errors import AlreadyKnown, CannotPayGas, NonceTooLow, SendRefused
from crossfill.kinds.evm.client import refusal_of


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("chain 1: eth_sendRawTransaction failed: already known", AlreadyKnown),  # geth, reth
        ("AlreadyKnown", AlreadyKnown),  # nethermind
        ("Known transaction: 0xab", AlreadyKnown),  # besu
        ("transaction already imported", AlreadyKnown),
        ("nonce too low: next nonce 7, tx nonce 6", NonceTooLow),  # geth
        ("NONCE_TOO_LOW", NonceTooLow),  # besu
        ("OldNonce", NonceTooLow),  # nethermind
        ("Insufficient funds for gas * price + value", CannotPayGas),  # anvil
        ("insufficient funds for gas * price + value: balance 1", CannotPayGas),  # geth
        ("replacement transaction underpriced", SendRefused),
    ],
)
def test_a_refusal_is_read_as_its_kind(message: str, kind: type[SendRefused]) -> None:
    refusal = refusal_of(message)
    assert type(refusal) is kind
    assert str(refusal) == message
