"""Authorizing a nonce mapping (POST /authorize): the wallet's signature checked, the mapping
stored once. The same mapping again is accepted (idempotent); the nonce mapped to another
request is a conflict."""

from __future__ import annotations

from datetime import datetime

import structlog
from sqlalchemy.exc import IntegrityError

from crossfill.domain.nonce_mapping import InvalidMappingSignature, NonceMapping
from crossfill.errors import BadRequest, Conflict, NotFound
from crossfill.runtime import Runtime
from crossfill.store import nonce_mappings, requests

log = structlog.get_logger(__name__)


async def authorize(
    runtime: Runtime, mapping: NonceMapping, signature: str, *, now: datetime
) -> None:
    """Store `mapping` if `signature` is its wallet's (BadRequest), its request exists
    (NotFound) and its (wallet, nonce) is unmapped or mapped to the same request (Conflict)."""
    try:
        mapping.check_signature(signature)
    except InvalidMappingSignature as exc:
        raise BadRequest(str(exc)) from None
    try:
        async with runtime.sessions() as session, session.begin():
            if await requests.get(session, mapping.request_id) is None:
                raise NotFound(f"request {mapping.request_id} not found")
            existing = await nonce_mappings.of_wallet_nonce(session, mapping.wallet, mapping.nonce)
            if existing is None:
                nonce_mappings.add(session, mapping, signature, now=now)
                log.info(
                    "nonce mapping stored",
                    wallet=mapping.wallet,
                    nonce=mapping.nonce,
                    request_id=mapping.request_id,
                )
                return
    except IntegrityError:
        # Another request stored this (wallet, nonce) at the same moment: read what it mapped.
        pass
    await _same_or_conflict(runtime, mapping)


async def _same_or_conflict(runtime: Runtime, mapping: NonceMapping) -> None:
    async with runtime.sessions() as session:
        existing = await nonce_mappings.of_wallet_nonce(session, mapping.wallet, mapping.nonce)
    if existing is None or existing.request_id != mapping.request_id:
        raise Conflict(
            f"nonce {mapping.nonce} of wallet {mapping.wallet} is already mapped to another request"
        )
