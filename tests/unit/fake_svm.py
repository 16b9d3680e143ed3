"""An in-memory SVM chain port with scripted behaviour: it may drop what it is sent, land it,
fail it, or be unreachable; block height moves only when the test says so."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from solders.hash import Hash
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from crossfill.chains.svm import Blockhash, BlockhashNotFound, SignatureStatus
from crossfill.errors import ChainUnreachable, ProgramFailed
from crossfill.types import ChainId

VALID_BLOCKS = 150
SVM_CHAIN = ChainId(792703809)


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

    async def transaction(self, signature: str) -> dict[str, Any]:
        raise NotImplementedError

    async def signatures_for(
        self, address: Pubkey, *, until: str | None, limit: int
    ) -> list[dict[str, Any]]:
        return []

    async def signatures_for_each(
        self, queries: Sequence[tuple[Pubkey, str | None]], *, limit: int
    ) -> list[list[dict[str, Any]]]:
        return [[] for _ in queries]

    async def close(self) -> None:
        return None
