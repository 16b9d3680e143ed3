"""Stored state belongs to the chains it was read from: checked by genesis block at start.

A devnet started again runs new chains under the same ids; cursors, deposits and requests of
the old ones would make the indexer wait for blocks the new chain has not reached. On the
devnet that state is forgotten (one log line per chain); in production a chain whose genesis
differs from the recorded one is a wrong RPC URL or a wrong database, and the service refuses
to start.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import structlog

from crossfill.errors import ChainError, ConfigError
from crossfill.kinds.port import KindChain
from crossfill.runtime import Runtime
from crossfill.settings import Mode
from crossfill.store import chain_genesis

log = structlog.get_logger(__name__)


async def bind_state_to_chains(runtime: Runtime, *, now: Callable[[], datetime]) -> None:
    for chain in runtime.kind_chains.values():
        await _bind(runtime, chain, now())


async def _bind(runtime: Runtime, chain: KindChain, now: datetime) -> None:
    chain_id = chain.chain_id
    try:
        genesis = await chain.genesis()
    except ChainError as exc:
        log.warning(
            "chain genesis not checked: chain unreachable", chain_id=chain_id, error=str(exc)
        )
        return
    if genesis is None:  # a kind with no history of its own to bind to
        return
    async with runtime.sessions() as session, session.begin():
        known = await chain_genesis.recorded(session, chain_id)
        if known == genesis:
            return
        if known is not None:
            if runtime.settings.mode is Mode.PRODUCTION:
                raise ConfigError(
                    f"chain {chain_id}: its genesis block is {genesis}, but the database "
                    f"holds state of a chain whose genesis is {known}: wrong RPC URL or database"
                )
            removed = await chain_genesis.forget_chain_state(session, chain_id)
            log.warning(
                "devnet chain started over: its stored state is forgotten",
                chain_id=chain_id,
                requests_removed=removed,
            )
        await chain_genesis.record(session, chain_id, genesis, now)
