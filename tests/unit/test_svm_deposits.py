"""Reading a deposit to the vault out of a landed SVM transaction (getTransaction, json)."""

from __future__ import annotations

from typing import Any

import base58
from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import Message

from crossfill.chains import svm_programs as programs
from crossfill.chains.svm_deposits import TOPUP_MEMO, read_vault_deposit

USER, VAULT, MINT = Keypair().pubkey(), Keypair().pubkey(), Keypair().pubkey()
ORDER_ID = "0x" + "ab" * 32


def _landed(instructions: list[Instruction], *, err: object = None) -> dict[str, Any]:
    """What the node answers for a transaction of these instructions."""
    message = Message.new_with_blockhash(instructions, USER, Hash.default())
    keys = [str(key) for key in message.account_keys]
    return {
        "slot": 7,
        "blockTime": 1_800_000_000,
        "transaction": {
            "signatures": ["sig"],
            "message": {
                "accountKeys": keys,
                "recentBlockhash": str(Hash.default()),
                "instructions": [
                    {"programIdIndex": ix.program_id_index, "accounts": list(ix.accounts),
                     "data": base58.b58encode(bytes(ix.data)).decode()}
                    for ix in message.instructions
                ],
            },
        },
        "meta": {"err": err, "postTokenBalances": []},
    }  # fmt: skip


def test_a_sol_transfer_with_a_memo_is_a_deposit_of_that_order() -> None:
    landed = _landed([programs.transfer_sol(USER, VAULT, 10**9), programs.memo(ORDER_ID)])
    deposit = read_vault_deposit(landed, str(VAULT))
    assert deposit is not None
    assert (deposit.sender, deposit.currency, deposit.amount) == (str(USER), "1" * 32, 10**9)
    assert deposit.order_id == ORDER_ID and deposit.slot == 7


def test_a_token_transfer_into_the_vault_account_names_its_mint() -> None:
    pay = programs.transfer_token(USER, VAULT, MINT, 5_000_000, 6)
    deposit = read_vault_deposit(_landed([pay, programs.memo(ORDER_ID)]), str(VAULT))
    assert deposit is not None and deposit.currency == str(MINT) and deposit.amount == 5_000_000


def test_no_memo_or_a_memo_that_is_no_order_id_reads_as_no_order() -> None:
    bare = read_vault_deposit(_landed([programs.transfer_sol(USER, VAULT, 1)]), str(VAULT))
    assert bare is not None and bare.order_id is None
    upper = read_vault_deposit(
        _landed([programs.transfer_sol(USER, VAULT, 1), programs.memo(ORDER_ID.upper())]),
        str(VAULT),
    )
    assert upper is not None and upper.order_id is None


def test_failed_outgoing_and_topup_transactions_are_no_deposits() -> None:
    to_vault = programs.transfer_sol(USER, VAULT, 1)
    assert (
        read_vault_deposit(_landed([to_vault], err={"InstructionError": [0, "x"]}), str(VAULT))
        is None
    )
    elsewhere = programs.transfer_sol(USER, Keypair().pubkey(), 1)
    assert read_vault_deposit(_landed([elsewhere, programs.memo(ORDER_ID)]), str(VAULT)) is None
    assert read_vault_deposit(_landed([to_vault, programs.memo(TOPUP_MEMO)]), str(VAULT)) is None
