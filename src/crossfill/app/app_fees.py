"""App fees a wallet earned: its balances, the claim it signs, filing it, its payout.

A claim goes: `prepare_claim` names the wallet's owed shares and their sum (the terms the
wallet signs, EIP-712); `file_claim` checks the signature and moves exactly those shares from
owed to claiming in one transaction (or none, when the balance changed meanwhile); the
app-fee payer (`kinds.evm.app_fee_payer`) pays the claim out on chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog
from sqlalchemy.exc import IntegrityError

from crossfill.app import registry
from crossfill.domain.app_fee_claim import ClaimTerms, InvalidClaimSignature
from crossfill.errors import BadRequest, Conflict, NotFound, Unauthorized
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig, evm_chain
from crossfill.runtime import Runtime
from crossfill.store import app_fee_claims, app_fees
from crossfill.store.tables import AppFeeClaim
from crossfill.types import Address

log = structlog.get_logger(__name__)
# How long a prepared claim may wait for the wallet's signature.
CLAIM_SIGNING_WINDOW = timedelta(minutes=10)


@dataclass(frozen=True)
class FeeBalance:
    """What a wallet may claim in one currency on one chain."""

    chain: ChainConfig
    currency: CurrencyConfig
    amount: int
    usd_micros: int


@dataclass(frozen=True)
class ClaimAsked:
    """A wallet's request to claim (POST /app-fees/{wallet}/claim)."""

    wallet: Address
    chain_id: int
    currency: str
    recipient: Address
    amount: int | None


async def owed_balances(runtime: Runtime, wallet: Address) -> list[FeeBalance]:
    """The wallet's owed shares per chain and currency, valued at today's prices (at the
    quoted ones while a currency has no price)."""
    async with runtime.sessions() as session:
        totals = await app_fees.balances(session, wallet)
    book = registry.price_book(runtime)
    found = []
    for total in totals:
        if total.state != app_fees.OWED:
            continue
        chain = evm_chain(runtime.deployment, total.chain_id)
        currency = chain.currency(total.currency) if chain is not None else None
        if chain is None or currency is None:
            log.warning("app fees in a currency no longer served", **vars(total))
            continue
        usd = registry.usd_micros(book, chain, currency, total.amount)
        found.append(
            FeeBalance(
                chain, currency, total.amount, total.quoted_usd_micros if usd is None else usd
            )
        )
    return found


async def prepare_claim(runtime: Runtime, asked: ClaimAsked, *, now: datetime) -> ClaimTerms:
    """The terms the wallet signs to claim its whole owed balance in one currency."""
    chain = registry.chain(runtime, asked.chain_id)
    currency = registry.currency(chain, asked.currency)
    async with runtime.sessions() as session:
        shares = await app_fee_claims.owed_shares(session, asked.wallet, chain.id, currency.address)
    total = sum(app_fee_claims.share_amount(share) for share in shares)
    if total == 0:
        raise BadRequest(
            f"nothing to claim: {asked.wallet} is owed no {currency.symbol} on chain {chain.id}"
        )
    if asked.amount is not None and asked.amount != total:
        raise BadRequest(
            f"amount: a claim takes the whole owed balance, {total}; partial claims are not "
            "supported"
        )
    return ClaimTerms(
        wallet=asked.wallet,
        recipient=asked.recipient,
        chain_id=chain.id,
        currency=Address(currency.address.lower()),
        amount=total,
        through_fee_id=shares[-1].id,
        expiry=int((now + CLAIM_SIGNING_WINDOW).timestamp()),
    )


async def file_claim(
    runtime: Runtime, wallet: Address, terms: ClaimTerms, signature: str, *, now: datetime
) -> str:
    """File the signed claim (idempotent: the same signed terms are one claim); its id."""
    if terms.wallet != wallet:
        raise BadRequest(f"wallet: the claim is {terms.wallet}'s, not {wallet}'s")
    registry.currency(registry.chain(runtime, terms.chain_id), terms.currency)
    if terms.expiry < now.timestamp():
        raise BadRequest("the claim expired before it was signed; ask for a new one")
    try:
        terms.check_signature(signature)
    except InvalidClaimSignature as exc:
        raise Unauthorized(f"signature: {exc}") from None
    claim_id = terms.claim_id()
    try:
        async with runtime.sessions() as session, session.begin():
            if await app_fee_claims.by_claim_id(session, claim_id) is not None:
                return claim_id
            shares = await app_fee_claims.owed_shares(
                session,
                wallet,
                terms.chain_id,
                terms.currency,
                through_fee_id=terms.through_fee_id,
            )
            owed = sum(app_fee_claims.share_amount(share) for share in shares)
            if owed != terms.amount or not shares:
                raise _balance_changed()
            if await app_fee_claims.file(session, terms, claim_id, shares, now=now) is None:
                raise _balance_changed()
    except IntegrityError:
        # The same signed claim, filed at the same moment by another request: one claim.
        return claim_id
    log.info("app-fee claim filed", claim_id=claim_id, wallet=wallet, amount=terms.amount)
    return claim_id


def _balance_changed() -> Conflict:
    return Conflict("the owed balance changed since this claim was prepared; claim again")


async def claim_of(runtime: Runtime, wallet: Address, claim_id: str) -> AppFeeClaim:
    async with runtime.sessions() as session:
        claim = await app_fee_claims.by_claim_id(session, claim_id)
    if claim is None or claim.wallet != wallet:
        raise NotFound(f"no claim {claim_id} of {wallet}")
    return claim
