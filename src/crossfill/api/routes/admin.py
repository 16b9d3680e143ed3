"""Operator endpoints behind `CROSSFILL_ADMIN_TOKEN` (`Authorization: Bearer <token>`).

API keys: create (the key is in this one response only), list, revoke. Webhooks: set (with
the key itself, which signs deliveries), show, remove, replay failed deliveries. Off when no
token is configured.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from crossfill.api.auth import require_bearer
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.params import ChainIdField, Label, OptionalChainIdQuery, RowIdPath
from crossfill.api.schemas.responses import (
    ApiKeyList,
    ApiKeyView,
    BooksReport,
    CreatedApiKey,
    WebhookRemoved,
    WebhookReplay,
    WebhookView,
)
from crossfill.app.books import books_of, books_wire
from crossfill.errors import BadRequest, Forbidden, NotFound
from crossfill.quoting.sponsorship import SponsorWallet, sponsor_wallet
from crossfill.store import api_keys, webhook_endpoints
from crossfill.store.tables import ApiKey, WebhookEndpoint
from crossfill.webhooks import config as webhook_config


async def operator_only(request: Request, runtime: RuntimeDep) -> None:
    token = runtime.settings.admin_token
    if not token:
        raise Forbidden("Admin endpoints are off: set CROSSFILL_ADMIN_TOKEN to use them")
    await require_bearer(
        request, runtime, token, "Admin endpoints need Authorization: Bearer <operator token>"
    )


# `operator_only` answers 403 (no operator token set), 401 (a wrong one) and 429 (this address's
# wrong tokens spent) on every admin route.
router = APIRouter(
    prefix="/admin",
    tags=["admin"],
    dependencies=[Depends(operator_only)],
    responses=responses(None, 401, 403, 429),
)
# A key changed by id: revoked, or its sponsor set or cleared.
KEY_CHANGED = responses(ApiKeyView, 400, 401, 403, 404)


class NewKey(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Annotated[Label, Field(min_length=1, max_length=100)]


def key_wire(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "name": key.name,
        "prefix": key.prefix,
        "createdAt": api_keys.iso(key.created_at),
        "revokedAt": api_keys.iso(key.revoked_at) if key.revoked_at else None,
        "sponsor": None
        if key.sponsor_address is None
        else {
            "wallet": key.sponsor_address,
            "chainId": key.sponsor_chain_id,
            "currency": key.sponsor_currency,
        },
    }


@router.post(
    "/api-keys",
    status_code=201,
    response_model=None,
    responses=responses(CreatedApiKey, 400, 401, 403, ok_status=201),
)
async def create_key(body: NewKey, runtime: RuntimeDep) -> dict[str, Any]:
    async with runtime.sessions() as session, session.begin():
        created = await api_keys.create(session, body.name, now=datetime.now(UTC))
    return {**key_wire(created.row), "key": created.secret}


@router.get("/api-keys", response_model=None, responses=responses(ApiKeyList, 401, 403))
async def list_keys(runtime: RuntimeDep) -> dict[str, Any]:
    async with runtime.sessions() as session:
        return {"apiKeys": [key_wire(key) for key in await api_keys.all_keys(session)]}


@router.delete("/api-keys/{key_id}", response_model=None, responses=KEY_CHANGED)
async def revoke_key(key_id: RowIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    async with runtime.sessions() as session, session.begin():
        key = await session.get(ApiKey, key_id)
        if key is None:
            raise NotFound(f"No API key with id {key_id}")
        await api_keys.revoke(session, key, now=datetime.now(UTC))
        return key_wire(key)


class SponsorSetting(BaseModel):
    model_config = ConfigDict(extra="forbid")
    wallet: str
    chainId: ChainIdField
    currency: str


async def _set_sponsor(
    runtime: RuntimeDep, key_id: int, wallet: SponsorWallet | None
) -> dict[str, Any]:
    async with runtime.sessions() as session, session.begin():
        key = await session.get(ApiKey, key_id)
        if key is None:
            raise NotFound(f"No API key with id {key_id}")
        api_keys.set_sponsor(key, wallet)
        return key_wire(key)


@router.put("/api-keys/{key_id}/sponsor", response_model=None, responses=KEY_CHANGED)
async def set_sponsor(
    key_id: RowIdPath, body: SponsorSetting, runtime: RuntimeDep
) -> dict[str, Any]:
    """The wallet paying this key's sponsored fees; it must approve the solver."""
    wallet = sponsor_wallet(runtime.deployment, body.wallet, body.chainId, body.currency)
    return await _set_sponsor(runtime, key_id, wallet)


@router.delete("/api-keys/{key_id}/sponsor", response_model=None, responses=KEY_CHANGED)
async def clear_sponsor(key_id: RowIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    return await _set_sponsor(runtime, key_id, None)


class WebhookSetting(BaseModel):
    model_config = ConfigDict(extra="forbid")
    apiKey: Annotated[str, Field(min_length=1, description="The key itself: it signs deliveries")]
    url: Annotated[str, Field(min_length=1, max_length=2000)]
    headers: dict[str, str] = {}


def _webhook_wire(key_id: int, endpoint: WebhookEndpoint | None) -> dict[str, Any]:
    if endpoint is None:
        return {"apiKeyId": key_id, "url": None, "headerNames": []}
    return {
        "apiKeyId": key_id,
        "url": endpoint.url,
        "headerNames": sorted(endpoint.headers),
        "updatedAt": api_keys.iso(endpoint.updated_at),
    }


@router.put("/webhooks", response_model=None, responses=responses(WebhookView, 400, 401, 403))
async def set_webhook(body: WebhookSetting, runtime: RuntimeDep) -> dict[str, Any]:
    async with runtime.sessions() as session, session.begin():
        try:
            configured = await webhook_config.set_endpoint(
                session, runtime.settings, body.apiKey, body.url, body.headers.items()
            )
        except webhook_config.WebhookConfigError as exc:
            raise BadRequest(str(exc)) from exc
        return _webhook_wire(configured.key.id, configured.endpoint)


@router.get(
    "/webhooks/{key_id}", response_model=None, responses=responses(WebhookView, 400, 401, 403)
)
async def show_webhook(key_id: RowIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    async with runtime.sessions() as session:
        return _webhook_wire(key_id, await webhook_endpoints.get(session, key_id))


@router.delete(
    "/webhooks/{key_id}",
    response_model=None,
    responses=responses(WebhookRemoved, 400, 401, 403, 404),
)
async def remove_webhook(key_id: RowIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    async with runtime.sessions() as session, session.begin():
        if not await webhook_endpoints.remove(session, key_id):
            raise NotFound(f"API key {key_id} has no webhook")
    return {"apiKeyId": key_id, "removed": True}


@router.post(
    "/webhooks/{key_id}/replay",
    response_model=None,
    responses=responses(WebhookReplay, 400, 401, 403),
)
async def replay_webhooks(key_id: RowIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    async with runtime.sessions() as session, session.begin():
        queued = await webhook_config.replay_failed(session, key_id, now=datetime.now(UTC))
    return {"apiKeyId": key_id, "queued": queued}


@router.get("/books", response_model=None, responses=responses(BooksReport, 400, 401, 403, 503))
async def books(runtime: RuntimeDep, chain_id: OptionalChainIdQuery = None) -> dict[str, Any]:
    """Each chain's books, of every kind (escrow owed to users, owed to the solver, app fees
    owed, fees earned, gas spent), and each account's balance on chain (a Depository, a key,
    the SVM vault, the solver's exchange account) against them, to the smallest unit, with the
    difference named by cause (`chainId`: one chain's alone)."""
    return books_wire(await books_of(runtime, chain_id, now=lambda: datetime.now(UTC)))
