"""Read a deposit to the solver vault out of a landed SVM transaction (pure).

A deposit is a System transfer to the vault, or an SPL Token transfer into one of the vault's
associated token accounts, in a transaction that succeeded; the Memo program's data in the
same transaction is its order id. Each incoming transfer of a transaction is a deposit of
its own, numbered in the order they ran (`index`: 0 for the first): the one the quote asked
for is paid for, a second one for the same order is refunded, as a second transaction would
be.

The quote hands out top-level instructions, but a wallet that is a program (a multisig, a
smart account) makes the same transfer and memo from within its own instruction: inner
instructions count too, in the order they ran. A versioned transaction's instructions may
name accounts loaded from lookup tables (`meta.loadedAddresses`, after the message's own
keys): they are resolved as the node lists them. An instruction naming an account the answer
does not list is not a transfer this reader knows, and is passed over: one transaction that
cannot be read must never stop the reading of every later deposit.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Any, Final

import base58
from solders.pubkey import Pubkey

from crossfill.kinds.svm import programs

_SYSTEM_TRANSFER: Final = 2
_TOKEN_TRANSFER: Final = 3
_TOKEN_TRANSFER_CHECKED: Final = 12
ORDER_ID: Final = re.compile(r"0x[0-9a-f]{64}", re.ASCII)
# The memo an operator funds the vault with: no deposit, never refunded.
TOPUP_MEMO: Final = "crossfill:topup"


@dataclass(frozen=True)
class VaultDeposit:
    signature: str
    slot: int
    block_time: int
    recent_blockhash: str
    sender: str
    currency: str  # the native address (thirty-two `1`s) or the mint, base58 as is
    amount: int
    memo: str | None
    index: int = 0  # among the transaction's deposits, in the order they ran
    fee: int = 0  # lamports the transaction paid

    @property
    def order_id(self) -> str | None:
        """The memo when it is an order id (0x and 64 lower-case hex digits)."""
        if self.memo is None or ORDER_ID.fullmatch(self.memo) is None:
            return None
        return self.memo


def read_vault_deposits(landed: dict[str, Any], vault: str) -> list[VaultDeposit]:
    """The deposits to `vault` in a `getTransaction` (json encoding) answer, in the order
    they ran."""
    meta = landed.get("meta") or {}
    if meta.get("err") is not None:
        return []
    message = landed["transaction"]["message"]
    loaded = meta.get("loadedAddresses") or {}
    keys: list[str] = [
        *message["accountKeys"],
        *(loaded.get("writable") or []),
        *(loaded.get("readonly") or []),
    ]
    mints = {b["accountIndex"]: b["mint"] for b in meta.get("postTokenBalances") or []}
    memo, incoming = None, []
    for instruction in _in_order_run(message["instructions"], meta.get("innerInstructions")):
        named = _named(instruction, keys)
        if named is None:
            continue
        program, accounts, data = named
        if program == str(programs.MEMO_PROGRAM_ID):
            memo = data.decode(errors="replace")
        elif (transfer := _incoming(program, accounts, data, vault, mints, keys)) is not None:
            incoming.append(transfer)
    if memo == TOPUP_MEMO:
        return []
    return [
        VaultDeposit(
            signature=landed["transaction"]["signatures"][0],
            slot=int(landed["slot"]),
            block_time=int(landed.get("blockTime") or 0),
            recent_blockhash=message["recentBlockhash"],
            sender=sender,
            currency=currency,
            amount=amount,
            memo=memo,
            index=index,
            fee=int(meta.get("fee") or 0),
        )
        for index, (sender, currency, amount) in enumerate(incoming)
    ]


def _in_order_run(
    top_level: list[dict[str, Any]], inner: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Every instruction of the transaction in the order they ran: each top-level one, then
    those it invoked (`meta.innerInstructions`, by its index)."""
    invoked: dict[int, list[dict[str, Any]]] = {}
    for group in inner or []:
        invoked.setdefault(int(group["index"]), []).extend(group["instructions"])
    ran = []
    for index, instruction in enumerate(top_level):
        ran.append(instruction)
        ran.extend(invoked.get(index, []))
    return ran


def _named(instruction: dict[str, Any], keys: list[str]) -> tuple[str, list[str], bytes] | None:
    """(program, accounts, data) of a compiled instruction; None when it names an account
    index the answer does not list."""
    indexes = [instruction["programIdIndex"], *instruction["accounts"]]
    if not all(isinstance(index, int) and 0 <= index < len(keys) for index in indexes):
        return None
    program, *accounts = (keys[index] for index in indexes)
    try:
        data = base58.b58decode(instruction["data"])
    except ValueError:
        return None
    return program, accounts, data


def _incoming(
    program: str,
    accounts: list[str],
    data: bytes,
    vault: str,
    mints: dict[int, str],
    keys: list[str],
) -> tuple[str, str, int] | None:
    """(sender, currency, amount) of a transfer into the vault, else None."""
    if program == programs.NATIVE_SOL_ADDRESS and len(data) == 12 and len(accounts) >= 2:
        (kind, lamports) = struct.unpack("<IQ", data)
        if kind == _SYSTEM_TRANSFER and accounts[1] == vault:
            return accounts[0], programs.NATIVE_SOL_ADDRESS, lamports
        return None
    if program != str(programs.TOKEN_PROGRAM_ID) or not data:
        return None
    if data[0] == _TOKEN_TRANSFER_CHECKED and len(data) == 10 and len(accounts) >= 4:
        destination, mint, owner = accounts[2], accounts[1], accounts[3]
    elif data[0] == _TOKEN_TRANSFER and len(data) == 9 and len(accounts) >= 3:
        destination, owner = accounts[1], accounts[2]
        mint = mints.get(keys.index(destination), "")
    else:
        return None
    if not mint or destination != _vault_account(vault, mint):
        return None
    (amount,) = struct.unpack("<Q", data[1:9])
    return owner, mint, amount


def _vault_account(vault: str, mint: str) -> str:
    return str(programs.token_account(Pubkey.from_string(vault), Pubkey.from_string(mint)))
