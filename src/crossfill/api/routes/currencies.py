"""POST /currencies/v2 (the UI kit's token list) and GET /currencies/token/price: the chain
registry's currencies and the prices quotes use."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.params import ChainIdField, ChainIdQuery, ReferrerQuery
from crossfill.app import registry
from crossfill.app.currencies import (
    CurrencySearch,
    Listed,
    search_currencies,
    token_price_micros,
)
from crossfill.domain.identifiers import (
    InvalidIdentifier,
    parse_address,
    parse_chain_id,
    parse_text,
)
from crossfill.errors import BadRequest
from crossfill.quoting.money import MICROS_PER_USD
from crossfill.quoting.response import currency_wire
from crossfill.runtime import Runtime

router = APIRouter(tags=["currencies"])
MAX_LISTED = 100


class CurrenciesBody(BaseModel):
    """The filters the SDK's `/currencies/v2` type lists; unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore")

    defaultList: StrictBool | None = None
    chainIds: list[ChainIdField] | None = Field(default=None, max_length=MAX_LISTED)
    term: StrictStr | None = Field(default=None, max_length=100)
    address: StrictStr | None = Field(default=None, max_length=100)
    currencyId: StrictStr | None = Field(default=None, max_length=50)
    tokens: list[Annotated[StrictStr, Field(max_length=120)]] | None = Field(
        default=None, max_length=MAX_LISTED
    )
    verified: StrictBool | None = None
    limit: StrictInt = Field(default=20, ge=1, le=MAX_LISTED)
    includeAllChains: StrictBool | None = None
    useExternalSearch: StrictBool | None = None
    depositAddressOnly: StrictBool | None = None
    referrer: StrictStr | None = Field(default=None, max_length=200)


def _token(runtime: Runtime, token: str) -> tuple[int, str]:
    """`chainId:address`."""
    chain_text, _, address = token.partition(":")
    try:
        chain_id = parse_chain_id(chain_text, "tokens[].chainId")
        return registry.chain(runtime, chain_id, "tokens").id, parse_address(address, "tokens")
    except InvalidIdentifier:
        raise BadRequest(f"tokens: {token[:120]!r} is not chainId:address") from None


def _search(runtime: Runtime, body: CurrenciesBody) -> CurrencySearch:
    for chain_id in body.chainIds or ():
        registry.chain(runtime, chain_id, "chainIds")
    try:
        term = None if body.term is None else parse_text(body.term, "term", max_length=100)
        address = None if body.address is None else parse_address(body.address, "address")
        wanted_id = (
            None
            if body.currencyId is None
            else parse_text(body.currencyId, "currencyId", max_length=50).lower()
        )
    except InvalidIdentifier as exc:
        raise BadRequest(str(exc)) from None
    return CurrencySearch(
        chain_ids=None if body.chainIds is None else frozenset(body.chainIds),
        term=term or None,
        address=address,
        currency_id=wanted_id,
        tokens=None
        if body.tokens is None
        else frozenset(_token(runtime, token) for token in body.tokens),
        verified=body.verified,
        featured_only=bool(body.defaultList),
        include_all_chains=bool(body.includeAllChains),
        deposit_address_only=bool(body.depositAddressOnly),
        limit=body.limit,
    )


def _listed_wire(listed: Listed) -> dict[str, Any]:
    return {**currency_wire(listed.chain, listed.currency), "vmType": listed.chain.vm_type}


@router.post("/currencies/v2", response_model=None, responses=responses("currencies-v2", 400, 429))
async def currencies(
    runtime: RuntimeDep, body: Annotated[CurrenciesBody | None, Body()] = None
) -> list[dict[str, Any]]:
    """The currencies served here, filtered: by chains, a search term (symbol, name or
    address), address, currency id (`usdc`), `chainId:address` tokens, verified, featured
    (`defaultList`); `includeAllChains` adds the matches' currency on every chain."""
    search = _search(runtime, body or CurrenciesBody())
    return [_listed_wire(listed) for listed in search_currencies(runtime.deployment, search)]


@router.get(
    "/currencies/token/price",
    response_model=None,
    responses=responses("token-price", 400, 429, 503),
)
async def token_price(
    runtime: RuntimeDep,
    chain_id: ChainIdQuery,
    address: Annotated[str, Query(description="The token's address", max_length=100)],
    referrer: ReferrerQuery = None,
) -> dict[str, float]:
    """A currency's USD price per whole unit, as quotes price it now."""
    try:
        currency = parse_address(address, "address")
    except InvalidIdentifier as exc:
        raise BadRequest(str(exc)) from None
    # The wire's price is a JSON number: micro-USD become a float only here.
    return {"price": token_price_micros(runtime, chain_id, currency) / MICROS_PER_USD}
