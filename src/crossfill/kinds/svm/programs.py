"""The SVM programs Crossfill uses and the instructions it builds for them (pure; solders only).

Only the System, SPL Token, Associated Token Account and Memo programs: a deposit from an
SVM chain needs no program of ours (a transfer to the solver's vault plus a Memo carrying the
order id), and a fill is a transfer from that vault.
"""

from __future__ import annotations

import struct
from typing import Final

from solders.instruction import AccountMeta, Instruction
from solders.pubkey import Pubkey
from solders.system_program import ID as SYSTEM_PROGRAM_ID
from solders.system_program import TransferParams, transfer
from solders.token.associated import get_associated_token_address

from crossfill.types import NATIVE_SVM_ADDRESS

TOKEN_PROGRAM_ID: Final = Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
ASSOCIATED_TOKEN_PROGRAM_ID: Final = Pubkey.from_string(
    "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
)
MEMO_PROGRAM_ID: Final = Pubkey.from_string("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
# The API's address of the native coin (it is also the System Program's id).
NATIVE_SOL_ADDRESS: Final = NATIVE_SVM_ADDRESS
NATIVE_SOL_DECIMALS: Final = 9
MINT_ACCOUNT_SIZE: Final = 82
TOKEN_ACCOUNT_SIZE: Final = 165
# The largest serialized transaction a validator accepts (the IPv6 MTU minus headers).
MAX_TRANSACTION_BYTES: Final = 1232

_TRANSFER_CHECKED: Final = 12
_MINT_TO: Final = 7
_INITIALIZE_MINT2: Final = 20
_CREATE_IDEMPOTENT: Final = 1


def token_account(owner: Pubkey, mint: Pubkey) -> Pubkey:
    """The owner's associated token account for `mint`."""
    return get_associated_token_address(owner, mint)


def transfer_sol(source: Pubkey, destination: Pubkey, lamports: int) -> Instruction:
    return transfer(TransferParams(from_pubkey=source, to_pubkey=destination, lamports=lamports))


def transfer_token(
    owner: Pubkey, recipient: Pubkey, mint: Pubkey, amount: int, decimals: int
) -> Instruction:
    """TransferChecked between the associated token accounts of `owner` and `recipient`."""
    return Instruction(
        TOKEN_PROGRAM_ID,
        struct.pack("<BQB", _TRANSFER_CHECKED, amount, decimals),
        [
            AccountMeta(token_account(owner, mint), is_signer=False, is_writable=True),
            AccountMeta(mint, is_signer=False, is_writable=False),
            AccountMeta(token_account(recipient, mint), is_signer=False, is_writable=True),
            AccountMeta(owner, is_signer=True, is_writable=False),
        ],
    )


def create_token_account(payer: Pubkey, owner: Pubkey, mint: Pubkey) -> Instruction:
    """Create `owner`'s associated token account if it is missing (the payer pays its rent)."""
    return Instruction(
        ASSOCIATED_TOKEN_PROGRAM_ID,
        bytes([_CREATE_IDEMPOTENT]),
        [
            AccountMeta(payer, is_signer=True, is_writable=True),
            AccountMeta(token_account(owner, mint), is_signer=False, is_writable=True),
            AccountMeta(owner, is_signer=False, is_writable=False),
            AccountMeta(mint, is_signer=False, is_writable=False),
            AccountMeta(SYSTEM_PROGRAM_ID, is_signer=False, is_writable=False),
            AccountMeta(TOKEN_PROGRAM_ID, is_signer=False, is_writable=False),
        ],
    )


def memo(text: str, signers: tuple[Pubkey, ...] = ()) -> Instruction:
    """A Memo instruction (the text is logged and kept in the transaction); the Memo program
    checks that every account it is given signed the transaction."""
    return Instruction(
        MEMO_PROGRAM_ID,
        text.encode(),
        [AccountMeta(signer, is_signer=True, is_writable=False) for signer in signers],
    )


def initialize_mint(mint: Pubkey, decimals: int, authority: Pubkey) -> Instruction:
    """InitializeMint2 (no freeze authority); the mint account must exist, owned by Token."""
    return Instruction(
        TOKEN_PROGRAM_ID,
        struct.pack("<BB", _INITIALIZE_MINT2, decimals) + bytes(authority) + b"\x00",
        [AccountMeta(mint, is_signer=False, is_writable=True)],
    )


def mint_to(mint: Pubkey, destination: Pubkey, authority: Pubkey, amount: int) -> Instruction:
    return Instruction(
        TOKEN_PROGRAM_ID,
        struct.pack("<BQ", _MINT_TO, amount),
        [
            AccountMeta(mint, is_signer=False, is_writable=True),
            AccountMeta(destination, is_signer=False, is_writable=True),
            AccountMeta(authority, is_signer=True, is_writable=False),
        ],
    )
