"""App fees: a wallet's balances, and claiming them (what the SDK's getAppFees and
claimAppFees call).

A claim is one signature step: the wallet signs the claim's terms (EIP-712), the SDK posts
them with the signature to `/app-fees/{wallet}/claims` and polls the step's check,
`/app-fees/{wallet}/claims/{claimId}`, until the payout is mined (`success`, its hash in
`txHashes`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.params import ClaimIdPath, WalletPath
from crossfill.api.schemas.app_fees import (
    ClaimBody,
    ClaimTermsBody,
    claim_asked,
    claim_signature,
    claim_terms,
)
from crossfill.api.schemas.responses import ClaimFiled
from crossfill.app import app_fees, fast_fills, registry
from crossfill.domain.app_fee_claim import CLAIM_TYPES, PRIMARY_TYPE, ClaimTerms
from crossfill.quoting.money import MICROS_PER_USD
from crossfill.quoting.response import amount_wire
from crossfill.runtime import Runtime
from crossfill.store import app_fee_claims
from crossfill.store import app_fees as app_fee_states
from crossfill.store.db import as_utc
from crossfill.store.tables import AppFeeClaim

router = APIRouter(tags=["app-fees"])
# Claim states as the SDK's check polling reads them.
CHECK_STATUS = {
    app_fee_states.CLAIMING: "pending",
    app_fee_claims.SUBMITTED: "submitted",
    app_fee_states.PAID: "success",
}


def usd_number(usd_micros: int) -> float:
    """A USD figure where the wire has a JSON number; integers everywhere before this."""
    return usd_micros / MICROS_PER_USD


@router.get(
    "/app-fees/{wallet}/balances",
    response_model=None,
    responses=responses("app-fee-balances", 400, 429),
)
async def balances(wallet: WalletPath, runtime: RuntimeDep) -> dict[str, Any]:
    """The wallet's owed app fees per chain and currency, ready to claim."""
    owed = await app_fees.owed_balances(runtime, wallet)
    total = sum(balance.usd_micros for balance in owed)
    outstanding = await fast_fills.outstanding_usd_micros(runtime, wallet)
    return {
        "balances": [
            amount_wire(balance.chain, balance.currency, balance.amount, balance.usd_micros)
            for balance in owed
        ],
        "totalBalanceUsd": usd_number(total),
        # Fast fills of the keys this wallet sponsors whose deposits are not confirmed yet.
        "outstandingFastFillBalanceUsd": usd_number(outstanding),
        "availableBalanceUsd": usd_number(total - outstanding),
    }


def _claim_step(terms: ClaimTerms) -> dict[str, Any]:
    claim_id = terms.claim_id()
    return {
        "id": "claim",
        "action": "Confirm claim",
        "description": "Sign to claim your app fees; they are paid to the recipient on chain",
        "kind": "signature",
        "requestId": claim_id,
        "items": [
            {
                "status": "incomplete",
                "data": {
                    "sign": {
                        "signatureKind": "eip712",
                        "domain": terms.domain(),
                        "types": CLAIM_TYPES,
                        "primaryType": PRIMARY_TYPE,
                        "value": terms.message(),
                    },
                    "post": {
                        "endpoint": f"/app-fees/{terms.wallet}/claims",
                        "method": "POST",
                        "body": terms.message(),
                    },
                },
                "check": {
                    "endpoint": f"/app-fees/{terms.wallet}/claims/{claim_id}",
                    "method": "GET",
                },
            }
        ],
    }


@router.post(
    "/app-fees/{wallet}/claim",
    response_model=None,
    responses=responses("app-fee-claim", 400, 429),
)
async def claim(wallet: WalletPath, body: ClaimBody, runtime: RuntimeDep) -> dict[str, Any]:
    """The step that claims the wallet's whole owed balance in one currency: a signature."""
    terms = await app_fees.prepare_claim(runtime, claim_asked(wallet, body), now=datetime.now(UTC))
    return {"steps": [_claim_step(terms)]}


@router.post(
    "/app-fees/{wallet}/claims",
    response_model=None,
    responses=responses(ClaimFiled, 400, 401, 409, 429),
)
async def file_claim(
    wallet: WalletPath,
    body: ClaimTermsBody,
    runtime: RuntimeDep,
    signature: Annotated[
        str, Query(description="The wallet's EIP-712 signature of the terms", max_length=200)
    ],
) -> dict[str, str]:
    """File a signed claim: its shares are reserved for it and paid out on chain."""
    claim_id = await app_fees.file_claim(
        runtime, wallet, claim_terms(body), claim_signature(signature), now=datetime.now(UTC)
    )
    return {"message": "Claim filed; the payout follows", "claimId": claim_id}


def _claim_wire(runtime: Runtime, claim: AppFeeClaim) -> dict[str, Any]:
    chain = registry.chain(runtime, claim.chain_id)
    currency = registry.currency(chain, claim.currency)
    amount = int(claim.amount)
    usd = registry.usd_micros(registry.price_book(runtime), chain, currency, amount)
    return {
        "status": CHECK_STATUS[claim.state],
        "claimId": claim.claim_id,
        "txHashes": [claim.tx_hash] if claim.tx_hash else [],
        "inTxHashes": [],
        "originChainId": claim.chain_id,
        "destinationChainId": claim.chain_id,
        "recipient": claim.recipient,
        "currency": amount_wire(chain, currency, amount, usd or 0),
        "updatedAt": int(as_utc(claim.updated_at).timestamp() * 1000),
    }


@router.get(
    "/app-fees/{wallet}/claims/{claimId}",
    response_model=None,
    responses=responses("app-fee-claim-status", 400, 404, 429),
)
async def claim_status(
    wallet: WalletPath, claim_id: ClaimIdPath, runtime: RuntimeDep
) -> dict[str, Any]:
    """A filed claim: pending, submitted (its payout sent) or success (mined)."""
    return _claim_wire(runtime, await app_fees.claim_of(runtime, wallet, claim_id))
