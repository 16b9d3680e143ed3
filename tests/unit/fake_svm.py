"""An in-memory SVM chain port with scripted behaviour: it may drop what it is sent, land it,
fail it, or be unreachable; block height moves only when the test says so. Transactions a
test lands (`land`) are listed for every account they name, as a node lists them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import base58
from solders.hash import Hash
from solders.instruction import Instruction
from solders.message import Message
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from crossfill.errors import ChainNotFound, ChainUnreachable, ProgramFailed
from crossfill.kinds.svm.client import (
    Blockhash,
    BlockhashNotFound,
    OwnedTokenAccount,
    SignatureStatus,
)
from crossfill.types import ChainId

VALID_BLOCKS = 150
SVM_CHAIN = ChainId(792703809)


def landed_answer(
    message: Message, *, signature: str, slot: int, block_time: int, err: object = None
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
        "meta": {"err": err, "postTokenBalances": []},
    }  # fmt: skip


@dataclass
class FakeSvm:
    chain_id: ChainId = SVM_CHAIN
    height: int = 1000
    # What happens to a transaction sent: "land", "drop" (never lands) or "refuse" (preflight).
    on_send: str = "land"
    unreachable: bool = False
    sent: list[str] = field(default_factory=list)
    landed: dict[str, SignatureStatus] = field(default_factory=dict)
    blockhashes: dict[str, int] = field(default_factory=dict)
    # Accounts that do not exist (a recipient's closed token account, say).
    missing_accounts: set[Pubkey] = field(default_factory=set)
    # Transactions landed by `land`: their getTransaction answers, and each address's
    # getSignaturesForAddress entries (newest first).
    transactions: dict[str, dict[str, Any]] = field(default_factory=dict)
    listings: dict[Pubkey, list[dict[str, Any]]] = field(default_factory=dict)
    slot: int = 500
    # What getTokenAccountsByOwner lists (for any owner), and whether it fails.
    token_accounts: list[OwnedTokenAccount] = field(default_factory=list)
    token_accounts_unreachable: bool = False
    listing_round_trips: int = 0

    def _check(self) -> None:
        if self.unreachable:
            raise ChainUnreachable("scripted outage")

    async def block_height(self) -> int:
        self._check()
        return self.height

    async def genesis_hash(self) -> str:
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
        return 0

    async def token_balance(self, owner: Pubkey, mint: Pubkey) -> int:
        self._check()
        return 0

    async def account_exists(self, address: Pubkey) -> bool:
        self._check()
        return address not in self.missing_accounts

    async def send(self, tx: VersionedTransaction, *, preflight: bool = True) -> str:
        self._check()
        signature = str(tx.signatures[0])
        self.sent.append(signature)
        if self.blockhashes.get(str(tx.message.recent_blockhash), -1) < self.height:
            raise BlockhashNotFound("expired")
        if self.on_send == "refuse" and preflight:
            raise ProgramFailed("refused", err={"InstructionError": [0, {"Custom": 1}]}, logs=())
        if self.on_send == "land" and signature not in self.landed:
            self.landed[signature] = SignatureStatus(self.height, None, "confirmed")
        return signature

    async def signature_status(self, signature: str) -> SignatureStatus | None:
        self._check()
        return self.landed.get(signature)

    def land(self, instructions: list[Instruction], payer: Pubkey) -> str:
        """A transaction of these instructions lands, finalized, in a slot of its own."""
        self.slot += 1
        signature = f"fake-signature-{self.slot}"
        message = Message.new_with_blockhash(instructions, payer, Hash.default())
        self.transactions[signature] = landed_answer(
            message, signature=signature, slot=self.slot, block_time=1_800_000_000 + self.slot
        )
        entry = {
            "signature": signature,
            "slot": self.slot,
            "err": None,
            "blockTime": 1_800_000_000 + self.slot,
            "confirmationStatus": "finalized",
        }
        for key in message.account_keys:
            self.listings.setdefault(key, []).insert(0, entry)
        return signature

    async def transaction(self, signature: str) -> dict[str, Any]:
        self._check()
        if signature not in self.transactions:
            raise ChainNotFound(f"transaction {signature} is unknown")
        return self.transactions[signature]

    async def token_accounts_of(self, owner: Pubkey) -> list[OwnedTokenAccount]:
        self._check()
        if self.token_accounts_unreachable:
            raise ChainUnreachable("scripted outage of getTokenAccountsByOwner")
        return list(self.token_accounts)

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
