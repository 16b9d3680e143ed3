"""Stuck transactions: send again what no node acknowledged; replace what stays unmined with
higher fees and point the records at the new hash.

Fills and refunds on one chain share the solver key's transaction manager; the chain's solver
runs this each tick for both.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.kinds.evm.txmanager import TxManager
from crossfill.store import deposits, requests


async def replace_stuck(
    txmanager: TxManager,
    sessions: async_sessionmaker[AsyncSession],
    *,
    older_than: timedelta,
) -> int:
    """Replace what has waited longer than `older_than`; the number replaced."""
    replacements = await txmanager.replace_stuck(older_than)
    if not replacements:
        return 0
    async with sessions() as session, session.begin():
        for pair in replacements:
            replaced, replacement = pair.replaced, pair.replacement
            if replaced.request_id is not None:
                await requests.replace_transaction_hash(
                    session, replaced.request_id, old=replaced.tx_hash, new=replacement.tx_hash
                )
            await deposits.replace_refund_hash(
                session, old=replaced.tx_hash, new=replacement.tx_hash
            )
    return len(replacements)
