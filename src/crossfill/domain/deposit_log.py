"""A deposit as its EVM chain logged it, and where its funds went: what the indexer reads
(`kinds.evm.depository_logs`, `kinds.evm.receiver_logs`) and the store records."""

from __future__ import annotations

from dataclasses import dataclass

# Where a deposit's funds went: the Depository (escrow, v2) or the Receiver, which forwards
# them to the solver at once (v1).
DEPOSITORY = "depository"
RECEIVER = "receiver"


@dataclass(frozen=True)
class DepositLog:
    tx_hash: str
    log_index: int
    block_number: int
    block_hash: str
    order_id: str
    depositor: str
    currency: str
    amount: int
    paid_to: str = DEPOSITORY
