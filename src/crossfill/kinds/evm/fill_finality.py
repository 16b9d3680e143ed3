"""Whether the fill of an order is final on its destination: what its deposit's repayment to the
solver waits for, whatever kind of chain the order was filled on.

On an EVM destination, final is the confirmation policy deposits follow
(`domain.confirmations.deep_enough`): the fill's block as deep under the destination's head as
the destination's tiers ask of a deposit worth the order's deposit. First from the records
alone (the block the fill was recorded mined in, the head as last read: no call), then asked
of the destination's node for the deposits about to be repaid (`evm_payment_final`): the
fill's receipt, successful, in the block the node has at that height. A fill a reorg took out
of the chain has no receipt (or another block) until it is mined again, and its deposit waits
until that block is as deep in turn.

On a destination of another kind (the SVM chain, the perps exchange), the fill's kind answers
(`KindChain.payment_final`) for the fills it recorded paid. A destination this process does
not serve is never final here: its deposits wait (and are not listed, so they hold no other
deposit back).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hexbytes import HexBytes

from crossfill.domain.confirmations import deep_enough
from crossfill.kinds.evm.receipt_outcomes import order_filler
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.port import KindChain
from crossfill.store.repayments import MinedFill, OwedDeposit
from crossfill.types import ChainId


async def evm_payment_final(
    chain: ChainRuntime, tx_hash: str, value_usd_micros: int | None
) -> bool:
    """`chain`'s node has the transaction, successful, in a block of its chain as deep as the
    chain's tiers ask of a deposit worth `value_usd_micros`. A `ChainError` when it fails."""
    receipt = await chain.client.receipt(tx_hash)
    if receipt is None or int(receipt["status"]) != 1:
        return False  # out of the chain (a reorg) until mined again, or reverted
    mined_in = int(receipt["blockNumber"])
    if not recorded_deep(chain, value_usd_micros, mined_in):
        return False
    block = await chain.client.block_at(mined_in)
    return block is not None and block.hash == HexBytes(receipt["blockHash"]).to_0x_hex()


def recorded_deep(chain: ChainRuntime, value_usd_micros: int | None, block_number: int) -> bool:
    """A block `block_number` deep enough under `chain`'s head as last read (no call)."""
    head = chain.state.head
    return head is not None and deep_enough(
        chain.config.confirmations, value_usd_micros, head=head.number, block_number=block_number
    )


async def evm_filler(chain: ChainRuntime, tx_hash: str, order_id: str) -> str | None:
    """Who filled the order in `tx_hash` as the chain's Filler logged it (`OrderFilled`'s
    solver, lower case); None when the receipt has no such log."""
    receipt = await chain.client.receipt(tx_hash)
    if receipt is None or int(receipt["status"]) != 1:
        return None
    return order_filler(receipt["logs"], chain.config.contracts.filler, order_id)


@dataclass(frozen=True)
class FillFinality:
    """Over every chain the service fills on (`destinations`, by id), the EVM ones among them
    (`evm`) judged from their records first."""

    destinations: Mapping[ChainId, KindChain]
    evm: Mapping[ChainId, ChainRuntime]

    def serves(self) -> list[int]:
        """The destinations whose fills can be judged here."""
        return [int(chain_id) for chain_id in self.destinations]

    def looks_final(self, owed: OwedDeposit, value_usd_micros: int | None) -> bool:
        """Some fill of the order was recorded mined deep enough at an EVM destination's head
        as last read, or recorded paid on a destination of another kind (no call)."""
        evm = self.evm.get(ChainId(owed.destination_chain_id))
        if evm is None:
            return ChainId(owed.destination_chain_id) in self.destinations and bool(
                self._fills(owed)
            )
        return any(
            fill.block_number is not None
            and recorded_deep(evm, value_usd_micros, fill.block_number)
            for fill in self._fills(owed)
        )

    async def final(self, owed: OwedDeposit, value_usd_micros: int | None) -> bool:
        """The destination has a fill of the order that can no longer be undone: the deposit
        may be repaid. A `ChainError` when the destination fails."""
        destination_id = ChainId(owed.destination_chain_id)
        evm = self.evm.get(destination_id)
        destination = self.destinations.get(destination_id)
        for fill in self._fills(owed):
            if evm is not None:
                if await evm_payment_final(evm, fill.tx_hash, value_usd_micros):
                    return True
            elif destination is not None and await destination.payment_final(fill.tx_hash):
                return True
        return False

    async def filler(self, owed: OwedDeposit) -> str | None:
        """Who filled an order an external solver won, as its destination's Filler logged it
        in the order's fill (None: not known there, or no external solver won it)."""
        evm = self.evm.get(ChainId(owed.destination_chain_id))
        if owed.exclusive_solver is None or evm is None:
            return None
        for fill in self._fills(owed):
            found = await evm_filler(evm, fill.tx_hash, owed.order_id)
            if found is not None:
                return found
        return None

    def _fills(self, owed: OwedDeposit) -> list[MinedFill]:
        return [fill for fill in owed.fills if fill.chain_id == owed.destination_chain_id]
