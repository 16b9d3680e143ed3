"""The explorer's routes: the searchable list, a request's page (and its live part, which the
page's script fetches again on each status update from `/ws`), and the operator's view behind
the operator token. Every page is rendered here, from the use cases the API answers with."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from crossfill.api.deps import RuntimeDep
from crossfill.api.explorer import operator_auth
from crossfill.api.explorer.links import Chains
from crossfill.api.explorer.list_view import ListForm, summaries
from crossfill.api.explorer.operator_view import operator_view
from crossfill.api.explorer.pages import PREFIX, render
from crossfill.api.explorer.request_view import RequestView, request_view
from crossfill.app.request_records import RecordShaping, detail
from crossfill.app.request_search import Identified, identify
from crossfill.domain.identifiers import InvalidIdentifier, parse_tx_hash
from crossfill.domain.listing_query import ListingError, ListingQuery, parse_listing
from crossfill.domain.search_terms import recognise
from crossfill.domain.status import RequestStatus
from crossfill.errors import BadRequest, NotFound
from crossfill.kinds.evm.config import evm_chains
from crossfill.runtime import Runtime
from crossfill.store import listing

router = APIRouter(prefix=PREFIX, include_in_schema=False)


def _listing_query(
    form: ListForm, found: Identified | None, continuation: str | None
) -> ListingQuery:
    try:
        params = form.listing_params()
        if found is not None:
            params |= found.listing_params()
        if continuation:
            params["continuation"] = [continuation]
        return parse_listing(params)
    except ListingError as exc:
        raise BadRequest(str(exc)) from exc


@router.get("")
async def request_list(request: Request, runtime: RuntimeDep) -> Response:
    """Requests newest first, filtered as the form says, a page at a time; a search for a
    request id or an order id opens that request's page."""
    form = ListForm.of(request.query_params)
    found: Identified | None = None
    async with runtime.sessions() as session:
        if form.q:
            try:
                term = recognise(form.q)
            except InvalidIdentifier as exc:
                raise BadRequest(str(exc)) from None
            found = await identify(session, term)
            if found.request_id is not None:
                return RedirectResponse(f"{PREFIX}/requests/{found.request_id}", 303)
        query = _listing_query(form, found, request.query_params.get("continuation"))
        rows, continuation = await listing.page(session, query)
    chains = Chains.of(runtime.deployment)
    return render(
        "list.html",
        form=form,
        found=found,
        rows=summaries(rows, chains),
        next_url=form.page_url(PREFIX, continuation) if continuation else None,
        first_url=form.page_url(PREFIX) if request.query_params.get("continuation") else None,
        statuses=[status.value for status in RequestStatus],
        chains=chains,
        symbols=sorted(
            {c.symbol for chain in evm_chains(runtime.deployment) for c in chain.currencies}
        ),
    )


async def _request_view(runtime: Runtime, request_id: str) -> RequestView:
    try:
        wanted = parse_tx_hash(request_id, "request id")
    except InvalidIdentifier as exc:
        raise BadRequest(f"{exc}; {request_id[:80]!r} is not one") from None
    async with runtime.sessions() as session:
        found = await detail(session, wanted, RecordShaping.of(runtime.deployment))
    if found is None:
        raise NotFound(f"There is no request {wanted}")
    return request_view(found, Chains.of(runtime.deployment))


@router.get("/requests/{request_id}")
async def request_page(request_id: str, runtime: RuntimeDep) -> Response:
    """One request: its timeline, fees, reasons and deposit address, kept live by its script."""
    return render("request.html", view=await _request_view(runtime, request_id))


@router.get("/requests/{request_id}/progress")
async def request_progress(request_id: str, runtime: RuntimeDep) -> Response:
    """The live part of a request's page (its status and timeline), as the page embeds it."""
    return render("progress.html", view=await _request_view(runtime, request_id))


@router.get("/operator")
async def operator_page(request: Request, runtime: RuntimeDep) -> Response:
    """Chain health, solver balances, queues and webhook failures (operator token only)."""
    await operator_auth.require_operator(request, runtime)
    view = await operator_view(runtime, request.app.state.readiness_checks)
    return render("operator.html", view=view, statuses=RequestStatus)


@router.post("/operator/session")
async def operator_sign_in(request: Request, runtime: RuntimeDep) -> Response:
    """The sign-in form: the operator token, checked, leaves a session cookie."""
    response = RedirectResponse(f"{PREFIX}/operator", 303)
    await operator_auth.sign_in(request, runtime, response)
    return response


@router.post("/operator/session/end")
async def operator_sign_out() -> Response:
    response = RedirectResponse(f"{PREFIX}/operator", 303)
    operator_auth.sign_out(response)
    return response
