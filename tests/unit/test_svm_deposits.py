"""Reading a deposit to the vault out of a landed SVM transaction (getTransaction, json)."""

from __future__ import annotations

from typing import Any

import base58
from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import CompiledInstruction, Instruction
from solders.keypair import Keypair
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey

from crossfill.kinds.svm import programs
from crossfill.kinds.svm.deposits import TOPUP_MEMO, VaultDeposit, read_vault_deposits
from tests.unit.fake_svm import landed_answer

USER, VAULT, MINT = Keypair().pubkey(), Keypair().pubkey(), Keypair().pubkey()
ORDER_ID = "0x" + "ab" * 32


def _landed(instructions: list[Instruction], *, err: object = None) -> dict[str, Any]:
    """What the node answers for a transaction of these instructions."""
    message = Message.new_with_blockhash(instructions, USER, Hash.default())
    return landed_answer(message, signature="sig", slot=7, block_time=1_800_000_000, err=err)


def _one(landed: dict[str, Any]) -> VaultDeposit:
    (deposit,) = read_vault_deposits(landed, str(VAULT))
    return deposit


def test_a_sol_transfer_with_a_memo_is_a_deposit_of_that_order() -> None:
    landed = _landed([programs.transfer_sol(USER, VAULT, 10**9), programs.memo(ORDER_ID)])
    deposit = _one(landed)
    assert (deposit.sender, deposit.currency, deposit.amount) == (str(USER), "1" * 32, 10**9)
    assert deposit.order_id == ORDER_ID and deposit.slot == 7
    assert (deposit.fee, deposit.block_time) == (5000, 1_800_000_000)  # as the node answers


def test_a_token_transfer_into_the_vault_account_names_its_mint() -> None:
    pay = programs.transfer_token(USER, VAULT, MINT, 5_000_000, 6)
    deposit = _one(_landed([pay, programs.memo(ORDER_ID)]))
    assert deposit.currency == str(MINT) and deposit.amount == 5_000_000


def test_no_memo_or_a_memo_that_is_no_order_id_reads_as_no_order() -> None:
    assert _one(_landed([programs.transfer_sol(USER, VAULT, 1)])).order_id is None
    upper = _one(_landed([programs.transfer_sol(USER, VAULT, 1), programs.memo(ORDER_ID.upper())]))
    assert upper.order_id is None


def test_failed_outgoing_and_topup_transactions_are_no_deposits() -> None:
    to_vault = programs.transfer_sol(USER, VAULT, 1)
    failed = _landed([to_vault], err={"InstructionError": [0, "x"]})
    assert read_vault_deposits(failed, str(VAULT)) == []
    elsewhere = programs.transfer_sol(USER, Keypair().pubkey(), 1)
    assert read_vault_deposits(_landed([elsewhere, programs.memo(ORDER_ID)]), str(VAULT)) == []
    assert read_vault_deposits(_landed([to_vault, programs.memo(TOPUP_MEMO)]), str(VAULT)) == []


def _compiled(ix: CompiledInstruction) -> dict[str, Any]:
    return {
        "programIdIndex": ix.program_id_index,
        "accounts": list(ix.accounts),
        "data": base58.b58encode(bytes(ix.data)).decode(),
    }


def _landed_v0(instructions: list[Instruction], table: list[Pubkey]) -> dict[str, Any]:
    """A versioned transaction of these instructions whose other accounts come from a
    lookup table holding `table`, as the node answers it (loaded addresses in `meta`)."""
    lookup = AddressLookupTableAccount(Keypair().pubkey(), table)
    message = MessageV0.try_compile(USER, instructions, [lookup], Hash.default())
    (used,) = message.address_table_lookups
    return {
        "slot": 9,
        "blockTime": 1_800_000_000,
        "version": 0,
        "transaction": {
            "signatures": ["sig"],
            "message": {
                "accountKeys": [str(key) for key in message.account_keys],
                "recentBlockhash": str(Hash.default()),
                "instructions": [_compiled(ix) for ix in message.instructions],
            },
        },
        "meta": {
            "err": None,
            "postTokenBalances": [],
            "loadedAddresses": {
                "writable": [str(table[index]) for index in used.writable_indexes],
                "readonly": [str(table[index]) for index in used.readonly_indexes],
            },
        },
    }


def test_a_versioned_transaction_paying_the_vault_from_a_lookup_table_is_a_deposit() -> None:
    landed = _landed_v0(
        [programs.transfer_sol(USER, VAULT, 10**9), programs.memo(ORDER_ID)], [VAULT]
    )
    assert str(VAULT) not in landed["transaction"]["message"]["accountKeys"]
    deposit = _one(landed)
    assert deposit.amount == 10**9 and deposit.order_id == ORDER_ID


def test_a_deposit_beside_instructions_on_looked_up_accounts_is_read() -> None:
    """Before: the other instruction's looked-up account was an IndexError, raised at every
    tick of the indexer, which then read no later deposit."""
    other = Keypair().pubkey()
    landed = _landed_v0(
        [
            programs.transfer_sol(USER, other, 1),
            programs.transfer_sol(USER, VAULT, 10**9),
            programs.memo(ORDER_ID),
        ],
        [other],
    )
    deposit = _one(landed)
    assert deposit.amount == 10**9 and deposit.order_id == ORDER_ID


def test_a_transfer_and_memo_made_by_a_wallet_program_are_a_deposit() -> None:
    """A smart wallet's one instruction, which ran the transfer and the memo itself."""
    landed = _landed([programs.transfer_sol(USER, VAULT, 10**9), programs.memo(ORDER_ID)])
    message = landed["transaction"]["message"]
    inner, message["accountKeys"] = (
        message["instructions"],
        [
            *message["accountKeys"],
            str(Keypair().pubkey()),  # the wallet program
        ],
    )
    wallet = len(message["accountKeys"]) - 1
    message["instructions"] = [{"programIdIndex": wallet, "accounts": [0], "data": "3Bxs"}]
    landed["meta"]["innerInstructions"] = [{"index": 0, "instructions": inner}]
    deposit = _one(landed)
    assert deposit.amount == 10**9 and deposit.order_id == ORDER_ID
    assert deposit.sender == str(USER)


def test_an_instruction_the_answer_cannot_name_is_passed_over() -> None:
    landed = _landed([programs.transfer_sol(USER, VAULT, 10**9), programs.memo(ORDER_ID)])
    instructions = landed["transaction"]["message"]["instructions"]
    instructions.insert(0, {"programIdIndex": 0, "accounts": [99], "data": "1"})
    instructions.insert(0, {"programIdIndex": 0, "accounts": [0], "data": "not base58: 0OIl"})
    deposit = _one(landed)
    assert deposit.amount == 10**9


def test_each_transfer_into_the_vault_is_a_deposit_of_its_own() -> None:
    """Before: only the first was read; the second was neither credited nor refunded."""
    landed = _landed(
        [
            programs.transfer_sol(USER, VAULT, 10**9),
            programs.transfer_token(USER, VAULT, MINT, 5_000_000, 6),
            programs.memo(ORDER_ID),
        ]
    )
    first, second = read_vault_deposits(landed, str(VAULT))
    assert (first.index, first.currency, first.amount) == (0, "1" * 32, 10**9)
    assert (second.index, second.currency, second.amount) == (1, str(MINT), 5_000_000)
    assert first.order_id == second.order_id == ORDER_ID
