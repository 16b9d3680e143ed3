"""A signer's mined transactions stay watched until final (`finality_blocks` deep).

A reorg can take a mined transaction of ours out of the chain. Nodes usually put it back in
their pool and it is mined again, but not always. If none does, the order it filled (or the
refund it paid) is left unpaid while its request says it succeeded, and every later
transaction of the signer waits behind its nonce, for ever: that chain's fills stop.

So a head that does not extend the last head checked (a reorg, or heads skipped) has the
signer's transactions mined since `finality_blocks` ago checked, newest block first, as the
deposits' reorg watch does: a block still canonical vouches for every block below it. A
transaction whose block was replaced is looked up by hash. Mined elsewhere, its block is
recorded. Found nowhere, its signed bytes are broadcast again, in nonce order: the same
transaction (same nonce, same hash), so nothing can be paid twice, and the nonces after it
are freed. Until it is seen mined again, every head checks again.

Only transactions that did not revert are sent again (and voids, which do nothing): one that
reverted was acted on as a revert (a refund, say), and mined again on the new fork it might
not revert. Its nonce is voided instead: a transfer of nothing from the signer to itself,
with fees raised over the reverted one's so that it displaces it from any pool still holding
it (`TxManager.void`). Either way the nonce is used, and nothing the revert was acted on can
happen after all. The void is watched until mined like the rest; should the reverted
transaction be mined again first, the void is dropped and that transaction recorded where it
now is (a changed outcome told to the operator, as below); should a transaction the journal
did not sign take the nonce (the key used by hand), the void is done too and sent no more.
"""

from __future__ import annotations

import asyncio
from itertools import groupby
from typing import Any

import structlog
from hexbytes import HexBytes

from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.evm.txmanager import VOID, TxManager
from crossfill.loops import run_forever, wait_interval
from crossfill.metrics import Metrics
from crossfill.store.tables import SentTransaction

log = structlog.get_logger(__name__)


class MinedWatch:
    def __init__(
        self,
        chain: ChainRuntime,
        txmanager: TxManager,
        *,
        interval_seconds: float,
        metrics: Metrics,
    ) -> None:
        self.chain = chain
        self.txmanager = txmanager
        self.interval_seconds = interval_seconds
        self._reorged = metrics.reorged_transactions
        self._announced: BlockHead | None = None
        # The last head whose chain was checked with nothing left to see mined again.
        self._settled: BlockHead | None = None
        self._wakeup = asyncio.Event()

    @property
    def name(self) -> str:
        return f"mined-watch-{self.chain.config.id}-{self.txmanager.sender[:10]}"

    def new_head(self, head: BlockHead) -> None:
        self._announced = head
        self._wakeup.set()

    async def run(self) -> None:
        await run_forever(self.name, self.tick, self._wait)

    async def _wait(self) -> None:
        await wait_interval(self._wakeup, self.interval_seconds)

    async def tick(self) -> None:
        head = self._announced
        if head is None or not self.txmanager.holds_signer():
            return
        settled = self._settled
        if settled is not None and settled.hash in (head.hash, head.parent_hash):
            self._settled = head  # the chain checked, or it one block longer
            return
        self._settled = head if await self.check(head) else None

    async def check(self, head: BlockHead) -> bool:
        """True when every transaction mined since `finality_blocks` before `head` is in the
        chain, or voided by a void mined; False when some were sent again or a void is not
        mined yet (to be checked at the next head)."""
        since = head.number - self.chain.config.finality_blocks + 1
        rows = await self.txmanager.mined_since(since)
        gone: list[SentTransaction] = []
        for number, in_block in groupby(rows, key=lambda row: row.block_number):
            assert number is not None
            block = await self.chain.client.block_at(number)
            moved = [row for row in in_block if block is None or row.block_hash != block.hash]
            if not moved:
                break  # a canonical block vouches for every block below it
            for row in moved:
                receipt = await self.chain.client.receipt(row.tx_hash)
                if receipt is None:
                    gone.append(row)
                    continue
                await self._followed(row, receipt)
        sent_again = [row for row in gone if row.status == "mined" or row.purpose == VOID]
        for row in sorted(gone, key=lambda row: row.nonce):
            if row in sent_again:
                log.warning(
                    "a mined transaction left the chain in a reorg: sent again", **self._named(row)
                )
                await self.txmanager.send_again(row)
                self._count("sent_again")
            elif await self.txmanager.void(row) is not None:
                log.warning(
                    "a reverted transaction left the chain in a reorg: its nonce voided",
                    **self._named(row),
                )
                self._count("voided")
        waiting = await self._voids_waiting()
        return not sent_again and not waiting

    async def _voids_waiting(self) -> bool:
        """Each void not yet seen mined sent again, unless the transaction it was to displace
        was mined after all (then followed there, and the void dropped). True while any
        waits."""
        waiting = False
        for void in await self.txmanager.settle_voids():
            voided = await self.txmanager.voided(void.nonce)
            receipt = None if voided is None else await self.chain.client.receipt(voided.tx_hash)
            if voided is not None and receipt is not None:
                if HexBytes(receipt["blockHash"]).to_0x_hex() != voided.block_hash:
                    await self._followed(voided, receipt)
                await self.txmanager.drop_voids(void.nonce)
                continue
            if await self.txmanager.void_taken(void):
                continue  # another transaction used the nonce: all the void was for
            await self.txmanager.send_again(void)
            waiting = True
        return waiting

    async def _followed(self, row: SentTransaction, receipt: Any) -> None:
        """A transaction mined again in another block: recorded there. Should it have done
        otherwise there (reverted where it had succeeded, or the reverse), what was done on
        its first outcome cannot be undone here: the operator is told, loudly."""
        succeeded = int(receipt["status"]) == 1
        block_hash = HexBytes(receipt["blockHash"]).to_0x_hex()
        await self.txmanager.mined_in(
            row, int(receipt["blockNumber"]), block_hash, succeeded=succeeded
        )
        if succeeded == (row.status == "mined"):
            self._count("mined_again")
            return
        self._count("outcome_changed")
        log.error(
            "a transaction mined again after a reorg did otherwise than the first time: what "
            "was done on its first outcome stands; the operator must check this request",
            succeeded_now=succeeded,
            **self._named(row),
        )

    def _count(self, outcome: str) -> None:
        self._reorged.labels(self.chain.config.id, outcome).inc()

    def _named(self, row: SentTransaction) -> dict[str, object]:
        """What a log entry names of a transaction."""
        return {
            "chain_id": self.chain.config.id,
            "tx_hash": row.tx_hash,
            "nonce": row.nonce,
            "purpose": row.purpose,
            "request_id": row.request_id,
        }
