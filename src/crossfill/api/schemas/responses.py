"""Documentation-only models of the answers that have no wire schema of their own.

Routes list them in `responses=` (never `response_model=`), so they describe the wire without
filtering it; `extra="allow"` keeps them open, as the wire schemas are.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Accepted(_Open):
    message: str


class Alive(_Open):
    status: str


class Ready(_Open):
    status: str
    checks: dict[str, Any]


class RequestsV2(_Open):
    """GET /requests/v2: v2 records (see docs/listings.md)."""

    requests: list[dict[str, Any]]
    continuation: str | None = None


class KeySponsor(_Open):
    wallet: str
    chainId: int
    currency: str


class ApiKeyView(_Open):
    id: int
    name: str
    prefix: str
    createdAt: str
    revokedAt: str | None
    sponsor: KeySponsor | None


class CreatedApiKey(ApiKeyView):
    key: str


class ApiKeyList(_Open):
    apiKeys: list[ApiKeyView]


class SolverBondView(_Open):
    chainId: int
    currency: str
    symbol: str
    amount: str
    amountFormatted: str
    amountUsd: str


class SolverFadeView(_Open):
    """An order the solver won and did not fill: the cooldown it set and its bond's debit."""

    requestId: str
    chainId: int
    currency: str
    cost: str
    debited: str | None
    state: str
    txHash: str | None
    consecutive: int
    cooldownUntil: str
    createdAt: str


class SolverView(_Open):
    """An external solver (docs/solvers.md), its bonds as read from the chain now."""

    id: int
    name: str
    addresses: dict[str, str]
    bidUrl: str
    routes: list[dict[str, Any]]
    maxSizeUsd: str
    reputation: int
    cooldownUntil: str | None
    bonds: list[SolverBondView]
    outstandingUsd: str
    consecutiveFades: int
    fades: list[SolverFadeView]
    createdAt: str
    updatedAt: str


class SolverList(_Open):
    solvers: list[SolverView]


class SolverRemoved(_Open):
    name: str
    removed: bool


class WebhookView(_Open):
    apiKeyId: int
    url: str | None
    headerNames: list[str]
    updatedAt: str | None = None


class WebhookRemoved(_Open):
    apiKeyId: int
    removed: bool


class WebhookReplay(_Open):
    apiKeyId: int
    queued: int


class ClaimFiled(_Open):
    """POST /app-fees/{wallet}/claims: the claim is filed (its payout follows)."""

    message: str
    claimId: str


class AttestedRequestData(_Open):
    originChainId: int
    originUser: str
    originCurrency: str
    originAmount: str
    destinationChainId: int
    destinationUser: str


class RequestSignature(_Open):
    """GET /requests/{requestId}/signature: the attested facts and the solver's signature."""

    requestData: AttestedRequestData
    signature: str


class Executed(_Open):
    """POST /execute: accepted; the sponsor sends it (poll /intents/status/v3)."""

    message: str
    requestId: str


class BooksCurrency(_Open):
    currency: str
    symbol: str
    owedToUsers: str
    owedToSolver: str
    appFeesOwed: str
    feesEarned: str
    gasSpent: str
    # Sent from this chain by the rebalancer, not yet arrived; and on its way toward it.
    inTransit: str
    arriving: str
    # Taken from faded external solvers' bonds (counted in feesEarned too).
    fadePenalties: str


class BooksCause(_Open):
    cause: str
    amount: str


class BooksReconciled(_Open):
    account: str
    address: str
    currency: str
    symbol: str
    onChain: str
    booked: str
    difference: str
    explained: list[BooksCause]
    unexplained: str
    unexplainedCause: str | None


class BooksChain(_Open):
    chainId: int
    currencies: list[BooksCurrency]
    reconciliation: list[BooksReconciled]


class BooksReport(_Open):
    """GET /admin/books: each chain's books, reconciled with the chain (amounts in the
    currency's smallest unit, as decimal strings, signed)."""

    chains: list[BooksChain]
    unexplained: bool
