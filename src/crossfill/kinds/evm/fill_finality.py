"""Whether the fill of an order is final on its destination: what its deposit's repayment to the
solver waits for.

Final is the confirmation policy deposits follow (`domain.confirmations.deep_enough`): the
fill's block as deep under the destination's head as the destination's tiers ask of a deposit
worth the order's deposit. First from the records alone (the block the fill was recorded
mined in, the head as last read: no call), then asked of the destination's node for the
deposits about to be repaid: the fill's receipt, successful, in the block the node has at
that height. A fill a reorg took out of the chain has no receipt (or another block) until it
is mined again, and its deposit waits until that block is as deep in turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hexbytes import HexBytes

from crossfill.domain.confirmations import deep_enough
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.store.repayments import MinedFill, OwedDeposit
from crossfill.types import ChainId


@dataclass(frozen=True)
class FillFinality:
    """Over the EVM chains the service fills on, by id."""

    destinations: Mapping[ChainId, ChainRuntime]

    def looks_final(self, owed: OwedDeposit, value_usd_micros: int | None) -> bool:
        """Some fill of the order was recorded mined deep enough at the destination's head as
        last read (no call to the chain)."""
        return any(
            fill.block_number is not None and self._deep(owed, value_usd_micros, fill.block_number)
            for fill in self._fills(owed)
        )

    async def final(self, owed: OwedDeposit, value_usd_micros: int | None) -> bool:
        """The destination's node has a fill of the order, successful, in a block of its
        chain deep enough: the deposit may be repaid. A `ChainError` when the node fails."""
        destination = self.destinations.get(ChainId(owed.destination_chain_id))
        if destination is None:
            return False
        for fill in self._fills(owed):
            receipt = await destination.client.receipt(fill.tx_hash)
            if receipt is None or int(receipt["status"]) != 1:
                continue  # out of the chain (a reorg) until mined again, or reverted
            mined_in = int(receipt["blockNumber"])
            if not self._deep(owed, value_usd_micros, mined_in):
                continue
            block = await destination.client.block_at(mined_in)
            if block is not None and block.hash == HexBytes(receipt["blockHash"]).to_0x_hex():
                return True
        return False

    def _fills(self, owed: OwedDeposit) -> list[MinedFill]:
        return [fill for fill in owed.fills if fill.chain_id == owed.destination_chain_id]

    def _deep(self, owed: OwedDeposit, value_usd_micros: int | None, block_number: int) -> bool:
        destination = self.destinations.get(ChainId(owed.destination_chain_id))
        head = None if destination is None else destination.state.head
        if destination is None or head is None:
            return False
        return deep_enough(
            destination.config.confirmations,
            value_usd_micros,
            head=head.number,
            block_number=block_number,
        )
