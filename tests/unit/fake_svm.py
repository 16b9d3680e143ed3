"""An in-memory SVM chain port with scripted behaviour: it may drop what it is sent, land it,
fail it, or be unreachable; block height moves only when the test says so. Transactions it
lands, sent or landed by the test (`land`), have a status, are readable and are listed for
every account they name, as a node lists them. It runs no program: balances are what the test
gives (`fund`, `give_tokens`). Checked against the devnet's node by `tests/conformance`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import base58
from solders.hash import Hash
from solders.instruction import Instruction
from solders.message import Message, VersionedMessage
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from crossfill.errors import ChainNotFound, ChainUnreachable, ProgramFailed
from crossfill.kinds.svm.client import (
    Blockhash,
    BlockhashNotFound,
    Commitment,
    LandedTransaction,
    OwnedTokenAccount,
    SignatureStatus,
    landed_of,
)
from crossfill.kinds.svm.programs import token_account
from crossfill.kinds.svm.transactions import LAMPORTS_PER_SIGNATURE
from crossfill.types import ChainId

VALID_BLOCKS = 150
SVM_CHAIN = ChainId(792703809)
BLOCK_TIME_BASE = 1_800_000_000
# What a program's refusal of a sent transaction is (an overdraft, as the System and Token
# programs answer it).
REFUSED: dict[str, object] = {"InstructionError": [0, {"Custom": 1}]}


def landed_answer(
    message: VersionedMessage,
    *,
    signature: str,
    slot: int,
    block_time: int,
    err: object = None,
) -> dict[str, Any]:
    """What a node answers getTransaction (json) for a legacy transaction of `message`."""
    return {
        "slot": slot,
        "blockTime": block_time,
        "transaction": {
            "signatures": [signature],
            "message": {
                "accountKeys": [str(key) for key in message.account_keys],
                "recentBlockhash": str(message.recent_blockhash),
                "instructions": [
                    {"programIdIndex": ix.program_id_index, "accounts": list(ix.accounts),
                     "data": base58.b58encode(bytes(ix.data)).decode()}
                    for ix in message.instructions
                ],
            },
        },
        "meta": {
            "err": err, "postTokenBalances": [],
            "fee": LAMPORTS_PER_SIGNATURE * message.header.num_required_signatures,
        },
    }  # fmt: skip


@dataclass
class FakeSvm:
    chain_id: ChainId = SVM_CHAIN
    height: int = 1000
    # What happens to a transaction sent: "land", "drop" (never lands) or "refuse" (its program
    # refuses it: in preflight, or landed failed when sent without).
    on_send: str = "land"
    unreachable: bool = False
    sent: list[str] = field(default_factory=list)
    # Transactions dropped when sent (`on_send="drop"`), by signature, for `land_dropped`.
    dropped: dict[str, VersionedMessage] = field(default_factory=dict)
    landed: dict[str, SignatureStatus] = field(default_factory=dict)
    blockhashes: dict[str, int] = field(default_factory=dict)
    # Lamports held, by account.
    lamports: dict[Pubkey, int] = field(default_factory=dict)
    # Token accounts by owner, and what each holds (by its address).
    token_accounts: dict[Pubkey, list[OwnedTokenAccount]] = field(default_factory=dict)
    token_amounts: dict[Pubkey, int] = field(default_factory=dict)
    # Transactions landed by `land`: their getTransaction answers, and each address's
    # getSignaturesForAddress entries (newest first).
    transactions: dict[str, dict[str, Any]] = field(default_factory=dict)
    listings: dict[Pubkey, list[dict[str, Any]]] = field(default_factory=dict)
    slot: int = 500
    # Whether getTokenAccountsByOwner fails.
    token_accounts_unreachable: bool = False
    listing_round_trips: int = 0

    def _check(self) -> None:
        if self.unreachable:
            raise ChainUnreachable("scripted outage")

    async def block_height(self) -> int:
        self._check()
        return self.height

    def fund(self, address: Pubkey, lamports: int) -> None:
        self.lamports[address] = lamports

    def give_tokens(
        self, owner: Pubkey, mint: Pubkey, units: int = 0, *, account: Pubkey | None = None
    ) -> Pubkey:
        """`owner`'s token account of `mint` (its associated one unless `account` names
        another) holds `units`, opened if it was not; its address."""
        address = account or token_account(owner, mint)
        owned = self.token_accounts.setdefault(owner, [])
        if all(known.address != address for known in owned):
            owned.append(OwnedTokenAccount(address, mint))
        self.token_amounts[address] = units
        return address

    async def genesis_hash(self) -> str:
        self._check()
        return "fake-genesis"

    async def health(self) -> None:
        self._check()

    async def latest_blockhash(self) -> Blockhash:
        self._check()
        blockhash = Hash.hash(self.height.to_bytes(8, "little"))
        self.blockhashes[str(blockhash)] = self.height + VALID_BLOCKS
        return Blockhash(blockhash, self.height + VALID_BLOCKS)

    async def balance(self, address: Pubkey) -> int:
        self._check()
        return self.lamports.get(address, 0)

    async def token_balance(self, owner: Pubkey, mint: Pubkey) -> int:
        self._check()
        return self.token_amounts.get(token_account(owner, mint), 0)

    async def account_exists(self, address: Pubkey) -> bool:
        self._check()
        return self.lamports.get(address, 0) > 0 or address in self.token_amounts

    async def send(self, tx: VersionedTransaction, *, preflight: bool = True) -> str:
        """As a node: a transaction landed already answers its signature; one of a blockhash
        it does not know (expired) is refused in preflight, else answered and dropped."""
        self._check()
        signature = str(tx.signatures[0])
        self.sent.append(signature)
        if signature in self.landed:
            return signature
        if self.blockhashes.get(str(tx.message.recent_blockhash), -1) < self.height:
            if preflight:
                raise BlockhashNotFound("expired")
            return signature
        if self.on_send == "refuse" and preflight:
            raise ProgramFailed("refused", err=REFUSED, logs=())
        if self.on_send != "drop":
            err = REFUSED if self.on_send == "refuse" else None
            self._keep(tx.message, signature, self.height, err, "confirmed")
        else:
            self.dropped[signature] = tx.message
        return signature

    def land_dropped(self, signature: str) -> None:
        """A transaction this node dropped lands after all (another node had it), now."""
        self._keep(self.dropped.pop(signature), signature, self.height, None, "confirmed")

    def _keep(
        self,
        message: VersionedMessage,
        signature: str,
        slot: int,
        err: object,
        commitment: Commitment,
    ) -> None:
        """A transaction landed in `slot`: its status, its getTransaction answer, and its
        entry in the listing of every account it names (newest first)."""
        block_time = BLOCK_TIME_BASE + slot
        self.landed[signature] = SignatureStatus(slot, err, commitment)
        self.transactions[signature] = landed_answer(
            message, signature=signature, slot=slot, block_time=block_time, err=err
        )
        entry = {
            "signature": signature,
            "slot": slot,
            "err": err,
            "blockTime": block_time,
            "confirmationStatus": commitment,
        }
        for key in dict.fromkeys(message.account_keys):
            self.listings.setdefault(key, []).insert(0, entry)

    async def signature_status(self, signature: str) -> SignatureStatus | None:
        self._check()
        return self.landed.get(signature)

    def land(self, instructions: list[Instruction], payer: Pubkey) -> str:
        """A transaction of these instructions lands, finalized, in a slot of its own."""
        self.slot += 1
        signature = f"fake-signature-{self.slot}"
        message = Message.new_with_blockhash(instructions, payer, Hash.default())
        self._keep(message, signature, self.slot, None, "finalized")
        return signature

    async def transaction(self, signature: str) -> dict[str, Any]:
        self._check()
        if signature not in self.transactions:
            raise ChainNotFound(f"transaction {signature} is unknown")
        return self.transactions[signature]

    async def landed_transaction(self, signature: str) -> LandedTransaction:
        return landed_of(await self.transaction(signature))

    async def token_accounts_of(self, owner: Pubkey) -> list[OwnedTokenAccount]:
        self._check()
        if self.token_accounts_unreachable:
            raise ChainUnreachable("scripted outage of getTokenAccountsByOwner")
        return list(self.token_accounts.get(owner, []))

    async def signatures_for(
        self, address: Pubkey, *, until: str | None, limit: int, before: str | None = None
    ) -> list[dict[str, Any]]:
        self._check()
        listed = self.listings.get(address, [])
        signatures = [entry["signature"] for entry in listed]
        if before in signatures:
            listed = listed[signatures.index(before) + 1 :]
        signatures = [entry["signature"] for entry in listed]
        if until in signatures:
            listed = listed[: signatures.index(until)]
        return listed[:limit]

    async def signatures_for_each(
        self, queries: Sequence[tuple[Pubkey, str | None]], *, limit: int
    ) -> list[list[dict[str, Any]]]:
        self.listing_round_trips += 1
        return [
            await self.signatures_for(address, until=until, limit=limit)
            for address, until in queries
        ]

    async def close(self) -> None:
        return None
