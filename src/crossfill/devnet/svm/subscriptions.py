"""Websocket subscriptions of the devnet SVM node: signatureSubscribe and slotSubscribe.

@solana/web3.js `confirmTransaction` subscribes to the signature and, meanwhile, polls the
block height; a signature subscription fires once, when the transaction reaches the asked
commitment, and is then gone, as a validator does it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Final

from crossfill.devnet.svm.ledger import JsonValue, Ledger

COMMITMENT_ORDER: Final = {"processed": 0, "confirmed": 1, "finalized": 2}

Outbox = asyncio.Queue[JsonValue]


@dataclass(frozen=True)
class _SignatureWatch:
    signature: str
    commitment: str
    outbox: Outbox


@dataclass
class SubscriptionHub:
    next_id: int = 1
    signatures: dict[int, _SignatureWatch] = field(default_factory=dict)
    slots: dict[int, Outbox] = field(default_factory=dict)

    def subscribe_signature(self, signature: str, commitment: str, outbox: Outbox) -> int:
        level = commitment if commitment in COMMITMENT_ORDER else "finalized"
        sub_id = self._new_id()
        self.signatures[sub_id] = _SignatureWatch(signature, level, outbox)
        return sub_id

    def subscribe_slots(self, outbox: Outbox) -> int:
        sub_id = self._new_id()
        self.slots[sub_id] = outbox
        return sub_id

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def unsubscribe(self, sub_id: int) -> bool:
        found = self.signatures.pop(sub_id, None) or self.slots.pop(sub_id, None)
        return found is not None

    def drop(self, outbox: Outbox) -> None:
        """Forget every subscription of a closed connection."""
        self.signatures = {k: w for k, w in self.signatures.items() if w.outbox is not outbox}
        self.slots = {k: box for k, box in self.slots.items() if box is not outbox}

    def on_slot(self, ledger: Ledger) -> None:
        for sub_id, outbox in self.slots.items():
            result = {"parent": ledger.slot - 1, "root": ledger.slot, "slot": ledger.slot}
            outbox.put_nowait(_notification("slotNotification", sub_id, result))
        self.on_change(ledger)

    def on_change(self, ledger: Ledger) -> None:
        """Fire the signature subscriptions whose transaction reached their commitment."""
        for sub_id, watch in list(self.signatures.items()):
            landed = ledger.landed(watch.signature)
            if landed is None:
                continue
            reached = COMMITMENT_ORDER[ledger.commitment_of(landed.slot)]
            if reached < COMMITMENT_ORDER[watch.commitment]:
                continue
            del self.signatures[sub_id]
            result = {"context": {"slot": ledger.slot}, "value": {"err": landed.err}}
            watch.outbox.put_nowait(_notification("signatureNotification", sub_id, result))


def _notification(method: str, sub_id: int, result: JsonValue) -> JsonValue:
    return {
        "jsonrpc": "2.0",
        "method": method,
        "params": {"result": result, "subscription": sub_id},
    }
