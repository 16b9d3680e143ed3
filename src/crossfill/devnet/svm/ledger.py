"""The devnet SVM's state: LiteSVM plus what a validator adds around it.

LiteSVM executes transactions but has no slots, no blockhash queue and a bounded history.
The ledger adds them: a slot per tick (block height = slot, none skipped), a blockhash per
slot valid for `BLOCKHASH_VALID_SLOTS` like a validator's queue, and every landed
transaction kept with its slot, balances before and after, and the addresses it touched, so
the JSON-RPC front answers getTransaction, getSignatureStatuses and getSignaturesForAddress.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Final

import base58
from solders.account import Account
from solders.hash import Hash
from solders.keypair import Keypair
from solders.litesvm import LiteSVM
from solders.message import Message
from solders.pubkey import Pubkey
from solders.system_program import ID as SYSTEM_PROGRAM_ID
from solders.token.state import Mint, TokenAccount
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import (
    FailedTransactionMetadata,
    InnerInstruction,
    TransactionMetadata,
)

from crossfill.kinds.svm.programs import (
    MINT_ACCOUNT_SIZE,
    TOKEN_ACCOUNT_SIZE,
    TOKEN_PROGRAM_ID,
    transfer_sol,
)

# A validator keeps 300 blockhashes but accepts a transaction's for 150 blocks.
BLOCKHASH_VALID_SLOTS: Final = 150
FIRST_SLOT: Final = 1
LAMPORTS_PER_SIGNATURE: Final = 5000
# What requestAirdrop hands out from: LiteSVM's own airdrop leaves no readable transaction.
FAUCET_LAMPORTS: Final = 10**18

JsonValue = Any  # the JSON-RPC wire values (dicts, lists, strings, numbers)


class RpcFailure(Exception):
    """A JSON-RPC error answer: code, message and optional data, as a validator sends them."""

    def __init__(self, code: int, message: str, data: JsonValue = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True)
class Landed:
    """A transaction that executed in `slot` (successfully or with `err`, its fee charged)."""

    signature: str
    slot: int
    block_time: int
    raw: bytes
    err: JsonValue
    logs: list[str]
    fee: int
    units: int
    pre_balances: list[int]
    post_balances: list[int]
    pre_token_balances: list[JsonValue]
    post_token_balances: list[JsonValue]
    memo: str | None
    # What each top-level instruction invoked, by its index (`meta.innerInstructions`).
    inner_instructions: list[JsonValue] = field(default_factory=list)


@dataclass
class Ledger:
    """One SVM chain in memory. Not thread-safe: the node serves it from one event loop."""

    svm: LiteSVM = field(default_factory=lambda: LiteSVM().with_blockhash_check(False))
    slot: int = FIRST_SLOT
    finality_slots: int = 2
    blockhash_valid_slots: int = BLOCKHASH_VALID_SLOTS
    blockhashes: dict[str, int] = field(default_factory=dict)
    history: dict[str, Landed] = field(default_factory=dict)
    by_address: dict[str, list[str]] = field(default_factory=dict)
    slot_times: dict[int, int] = field(default_factory=dict)
    faucet: Keypair = field(default_factory=Keypair)
    # A new one per node: a client tells a restarted devnet chain from the one it knew.
    genesis_hash: str = field(default_factory=lambda: str(Hash.new_unique()))

    def __post_init__(self) -> None:
        self.svm.set_account(self.faucet.pubkey(), Account(FAUCET_LAMPORTS, b"", SYSTEM_PROGRAM_ID))
        self.svm.warp_to_slot(self.slot)
        self._remember_blockhash()

    # -- time -------------------------------------------------------------------------------

    def advance(self) -> int:
        """The next slot, with its own blockhash; hashes older than the window are forgotten."""
        self.slot += 1
        self.svm.warp_to_slot(self.slot)
        self.svm.expire_blockhash()
        self._remember_blockhash()
        self.blockhashes = {h: last for h, last in self.blockhashes.items() if last >= self.slot}
        return self.slot

    def _remember_blockhash(self) -> None:
        self.blockhashes[str(self.svm.latest_blockhash())] = self.slot + self.blockhash_valid_slots
        self.slot_times[self.slot] = int(time.time())

    @property
    def block_height(self) -> int:
        return self.slot

    def latest_blockhash(self) -> tuple[str, int]:
        blockhash = str(self.svm.latest_blockhash())
        return blockhash, self.blockhashes[blockhash]

    def blockhash_valid(self, blockhash: Hash) -> bool:
        return self.blockhashes.get(str(blockhash), -1) >= self.block_height

    def commitment_of(self, slot: int) -> str:
        if self.slot - slot >= self.finality_slots:
            return "finalized"
        return "confirmed" if self.slot > slot else "processed"

    # -- accounts ---------------------------------------------------------------------------

    def account(self, address: Pubkey) -> Account | None:
        found = self.svm.get_account(address)
        if found is None or (found.lamports == 0 and not found.data):
            return None
        return found

    def balance(self, address: Pubkey) -> int:
        return self.svm.get_balance(address) or 0

    def token_account(self, address: Pubkey) -> TokenAccount | None:
        data = self._token_program_data(address, TOKEN_ACCOUNT_SIZE)
        return None if data is None else TokenAccount.from_bytes(data)

    def mint(self, address: Pubkey) -> Mint | None:
        data = self._token_program_data(address, MINT_ACCOUNT_SIZE)
        return None if data is None else Mint.from_bytes(data)

    def _token_program_data(self, address: Pubkey, size: int) -> bytes | None:
        """The data of the token program's account of `size` bytes at `address`; None when
        there is none (no account, another owner, another size)."""
        found = self.account(address)
        if found is None or found.owner != TOKEN_PROGRAM_ID or len(found.data) != size:
            return None
        return bytes(found.data)

    def token_accounts_of(self, owner: Pubkey) -> list[tuple[Pubkey, TokenAccount]]:
        return [
            (address, TokenAccount.from_bytes(bytes(account.data)))
            for address, account in self.svm.get_program_accounts(TOKEN_PROGRAM_ID)
            if len(account.data) == TOKEN_ACCOUNT_SIZE
            and TokenAccount.from_bytes(bytes(account.data)).owner == owner
        ]

    def token_amount(self, amount: int, mint: Pubkey) -> JsonValue:
        """A validator's `uiTokenAmount` shape."""
        found = self.mint(mint)
        decimals = found.decimals if found is not None else 0
        ui_amount = amount / 10**decimals  # display only, as the validator sends it
        text = f"{amount}" if decimals == 0 else f"{amount / 10**decimals:.{decimals}f}"
        return {
            "amount": str(amount),
            "decimals": decimals,
            "uiAmount": ui_amount,
            "uiAmountString": text.rstrip("0").rstrip(".") if "." in text else text,
        }

    # -- transactions -----------------------------------------------------------------------

    def simulate(self, tx: VersionedTransaction) -> tuple[JsonValue, list[str], int]:
        """(err or None, logs, compute units) of running `tx` on the current state."""
        result = self.svm.simulate_transaction(tx)
        if isinstance(result, FailedTransactionMetadata):
            meta = result.meta()
            return _error_json(result), list(meta.logs()), meta.compute_units_consumed()
        meta = result.meta()
        return None, list(meta.logs()), meta.compute_units_consumed()

    def execute(self, tx: VersionedTransaction) -> Landed:
        """Run `tx` in the current slot and keep it (a failure is kept too, its fee paid)."""
        keys = list(tx.message.account_keys)
        pre = [self.balance(key) for key in keys]
        pre_tokens = self._token_balances(keys)
        result = self.svm.send_transaction(tx)
        meta: TransactionMetadata = (
            result.meta() if isinstance(result, FailedTransactionMetadata) else result
        )
        landed = Landed(
            signature=str(tx.signatures[0]),
            slot=self.slot,
            block_time=self.slot_times[self.slot],
            raw=bytes(tx),
            err=_error_json(result) if isinstance(result, FailedTransactionMetadata) else None,
            logs=list(meta.logs()),
            fee=meta.fee(),
            units=meta.compute_units_consumed(),
            pre_balances=pre,
            post_balances=[self.balance(key) for key in keys],
            pre_token_balances=pre_tokens,
            post_token_balances=self._token_balances(keys),
            memo=_memo_of(list(meta.logs())),
            inner_instructions=_inner_json(meta.inner_instructions()),
        )
        self._keep(landed, keys)
        return landed

    def airdrop(self, address: Pubkey, lamports: int) -> str:
        """A real transfer from the faucet, so it is listed and readable like any other."""
        transfer = transfer_sol(self.faucet.pubkey(), address, lamports)
        message = Message.new_with_blockhash(
            [transfer], self.faucet.pubkey(), self.svm.latest_blockhash()
        )
        landed = self.execute(VersionedTransaction(message, [self.faucet]))
        if landed.err is not None:
            raise RpcFailure(-32603, f"airdrop failed: {landed.err}")
        return landed.signature

    def landed(self, signature: str) -> Landed | None:
        return self.history.get(signature)

    def signatures_for(self, address: Pubkey) -> list[Landed]:
        """Newest first, as getSignaturesForAddress lists them."""
        return [self.history[s] for s in reversed(self.by_address.get(str(address), []))]

    def _keep(self, landed: Landed, keys: list[Pubkey]) -> None:
        self.history[landed.signature] = landed
        for key in dict.fromkeys(keys):
            self.by_address.setdefault(str(key), []).append(landed.signature)

    def _token_balances(self, keys: list[Pubkey]) -> list[JsonValue]:
        balances = []
        for index, key in enumerate(keys):
            found = self.token_account(key)
            if found is None:
                continue
            balances.append(
                {
                    "accountIndex": index,
                    "mint": str(found.mint),
                    "owner": str(found.owner),
                    "programId": str(TOKEN_PROGRAM_ID),
                    "uiTokenAmount": self.token_amount(found.amount, found.mint),
                }
            )
        return balances


def _inner_json(invoked: list[list[InnerInstruction]]) -> list[JsonValue]:
    """LiteSVM's inner instructions as a node's json encoding lists them: for each top-level
    instruction that invoked others, its index and theirs, in the order they ran."""
    return [
        {
            "index": index,
            "instructions": [
                {
                    "programIdIndex": compiled.program_id_index,
                    "accounts": list(compiled.accounts),
                    "data": base58.b58encode(bytes(compiled.data)).decode(),
                    "stackHeight": inner.stack_height(),
                }
                for inner in instructions
                for compiled in (inner.instruction(),)
            ],
        }
        for index, instructions in enumerate(invoked)
        if instructions
    ]


def _error_json(result: FailedTransactionMetadata) -> JsonValue:
    """The error as the JSON-RPC spells it: "BlockhashNotFound", {"InstructionError": [...]}."""
    return json.loads(result.to_json())["err"]


def _memo_of(logs: list[str]) -> str | None:
    """The memos a transaction logged, joined as getSignaturesForAddress shows them."""
    memos = []
    for index, line in enumerate(logs):
        if line.startswith("Program log: Memo (len ") and index + 1 < len(logs):
            length = line.removeprefix("Program log: Memo (len ").rstrip(")")
            memos.append(f"[{length}] {logs[index + 1].removeprefix('Program log: ')}")
    return "; ".join(memos) or None
