"""SVM transactions a client signs: a deposit's instructions, their size, their wire shape.

A deposit from an SVM chain is a transfer to the solver's vault (SOL, or a token from the
user's associated account to the vault's) plus a Memo carrying the order id; the indexer
reads both back. A validator refuses a transaction over 1232 bytes, so a quote checks the
size of what it hands out (with every signature and a blockhash counted) and refuses to
quote rather than hand out a transaction no wallet can send.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from solders.hash import Hash
from solders.instruction import Instruction
from solders.message import Message
from solders.pubkey import Pubkey
from solders.transaction import Transaction

from crossfill.errors import CrossfillError
from crossfill.kinds.svm import programs

# The base fee of a transaction: lamports per signature it carries.
LAMPORTS_PER_SIGNATURE = 5000


class TransactionTooLarge(CrossfillError, ValueError):
    """The transaction would exceed the 1232-byte limit a validator enforces."""

    def __init__(self, size: int) -> None:
        super().__init__(
            f"the SVM transaction would be {size} bytes; at most "
            f"{programs.MAX_TRANSACTION_BYTES} are accepted"
        )
        self.size = size


@dataclass(frozen=True)
class SvmDeposit:
    """What a user sends to the solver's vault for one order."""

    user: Pubkey
    vault: Pubkey
    # None: native SOL; otherwise the SPL mint.
    mint: Pubkey | None
    amount: int
    decimals: int
    order_id: str
    # `depositFeePayer`: who pays the transaction's fee, when not the user. It signs too: the
    # Memo names it as a signer, so the instructions cannot be sent without its signature.
    fee_payer: Pubkey | None = None

    @property
    def payer(self) -> Pubkey:
        return self.fee_payer or self.user


def deposit_instructions(deposit: SvmDeposit) -> list[Instruction]:
    if deposit.mint is None:
        payment = programs.transfer_sol(deposit.user, deposit.vault, deposit.amount)
    else:
        payment = programs.transfer_token(
            deposit.user, deposit.vault, deposit.mint, deposit.amount, deposit.decimals
        )
    signers = () if deposit.payer == deposit.user else (deposit.payer,)
    return [payment, programs.memo(deposit.order_id, signers)]


@dataclass(frozen=True)
class SvmPaymentOrder:
    """A payment from the solver's vault: a fill (or a refund) of one request."""

    purpose: str
    key: str
    recipient: Pubkey
    # None: native SOL; otherwise the SPL mint.
    mint: Pubkey | None
    amount: int
    decimals: int
    memo: str

    @property
    def currency(self) -> str:
        return programs.NATIVE_SOL_ADDRESS if self.mint is None else str(self.mint)


def payment_instructions(vault: Pubkey, order: SvmPaymentOrder) -> list[Instruction]:
    """SOL, or the token into the recipient's associated account (created, the vault paying
    its rent, when it is missing), then a Memo naming what the payment is for."""
    if order.mint is None:
        payment = [programs.transfer_sol(vault, order.recipient, order.amount)]
    else:
        payment = [
            programs.create_token_account(vault, order.recipient, order.mint),
            programs.transfer_token(
                vault, order.recipient, order.mint, order.amount, order.decimals
            ),
        ]
    return [*payment, programs.memo(order.memo)]


def serialized_size(instructions: list[Instruction], payer: Pubkey) -> int:
    """Bytes of the signed legacy transaction (signatures are fixed-size, so unsigned counts)."""
    message = Message.new_with_blockhash(instructions, payer, Hash.default())
    return len(bytes(Transaction.new_unsigned(message)))


def check_size(instructions: list[Instruction], payer: Pubkey) -> int:
    """The transaction's size, or `TransactionTooLarge` past 1232 bytes."""
    size = serialized_size(instructions, payer)
    if size > programs.MAX_TRANSACTION_BYTES:
        raise TransactionTooLarge(size)
    return size


class AccountMetaWire(TypedDict):
    pubkey: str
    isSigner: bool
    isWritable: bool


class InstructionWire(TypedDict):
    keys: list[AccountMetaWire]
    programId: str
    data: str


def instruction_wire(instruction: Instruction) -> InstructionWire:
    """An instruction as quote items carry it: accounts, program id and hex data."""
    return {
        "keys": [
            {
                "pubkey": str(meta.pubkey),
                "isSigner": meta.is_signer,
                "isWritable": meta.is_writable,
            }
            for meta in instruction.accounts
        ],
        "programId": str(instruction.program_id),
        "data": bytes(instruction.data).hex(),
    }
