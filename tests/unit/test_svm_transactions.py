"""SVM deposit transactions: their instructions, the 1232-byte limit, their wire shape."""

from __future__ import annotations

import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.transaction import Transaction

from crossfill.kinds.svm import programs
from crossfill.kinds.svm.transactions import (
    SvmDeposit,
    TransactionTooLarge,
    check_size,
    deposit_instructions,
    instruction_wire,
    serialized_size,
)

USER, VAULT, MINT = Keypair(), Keypair().pubkey(), Keypair().pubkey()
ORDER_ID = "0x" + "ab" * 32


def _deposit(mint: object = MINT) -> SvmDeposit:
    return SvmDeposit(
        user=USER.pubkey(), vault=VAULT, mint=MINT if mint is MINT else None,
        amount=5_000_000, decimals=6, order_id=ORDER_ID,
    )  # fmt: skip


@pytest.mark.parametrize("mint", [MINT, None])
def test_a_deposit_is_a_transfer_and_a_memo_well_under_the_limit(mint: object) -> None:
    instructions = deposit_instructions(_deposit(mint))
    assert [ix.program_id for ix in instructions][-1] == programs.MEMO_PROGRAM_ID
    assert bytes(instructions[-1].data) == ORDER_ID.encode()
    assert check_size(instructions, USER.pubkey()) < programs.MAX_TRANSACTION_BYTES // 2


def test_size_counts_what_a_signed_transaction_serializes_to() -> None:
    instructions = deposit_instructions(_deposit())
    signed = Transaction.new_signed_with_payer(instructions, USER.pubkey(), [USER], Hash.default())
    assert serialized_size(instructions, USER.pubkey()) == len(bytes(signed))


def test_exactly_1232_bytes_is_accepted_and_one_more_is_refused() -> None:
    base = serialized_size([programs.memo("")], USER.pubkey())
    # A memo's length is one byte of its compact length prefix while under 128 bytes; above
    # it is two, so fill up to the limit with a memo long enough for a two-byte prefix.
    fill = programs.MAX_TRANSACTION_BYTES - base - 1
    at_limit = [programs.memo("m" * fill)]
    assert check_size(at_limit, USER.pubkey()) == programs.MAX_TRANSACTION_BYTES
    with pytest.raises(TransactionTooLarge) as refused:
        check_size([programs.memo("m" * (fill + 1))], USER.pubkey())
    assert refused.value.size == programs.MAX_TRANSACTION_BYTES + 1


def test_instructions_go_on_the_wire_as_keys_program_and_hex_data() -> None:
    payment, memo = deposit_instructions(_deposit())
    wire = instruction_wire(payment)
    assert wire["programId"] == str(programs.TOKEN_PROGRAM_ID)
    assert wire["keys"][-1] == {"pubkey": str(USER.pubkey()), "isSigner": True, "isWritable": False}
    assert bytes.fromhex(wire["data"])[0] == 12  # TransferChecked
    assert instruction_wire(memo)["data"] == ORDER_ID.encode().hex()
