"""`crossfill requests`: the requests GET /requests/v3 lists, and one request's timeline."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from crossfill.cli.console import console
from crossfill.cli.database import migrated_session
from crossfill.cli.environment import command_deployment, command_settings
from crossfill.domain.listing_query import ListingError, ListingQuery, parse_listing
from crossfill.domain.reason_words import reasons
from crossfill.domain.request_fees import fee_rows
from crossfill.domain.request_timeline import timeline
from crossfill.errors import CrossfillError

if TYPE_CHECKING:
    from crossfill.app.request_records import RecordShaping, RequestDetail
    from crossfill.settings import Settings
    from crossfill.store.tables import Request as RequestRow

app = typer.Typer(help="Requests as GET /requests/v3 shows them.")

Listed = list[tuple["RequestRow", dict[str, Any]]]


def _query(options: dict[str, str | None]) -> ListingQuery:
    """The listing's own query, from the options given (field name → value)."""
    params = {name: [value] for name, value in options.items() if value is not None}
    try:
        return parse_listing(params)
    except ListingError as exc:
        raise typer.BadParameter(str(exc)) from None


def _shaping() -> tuple[Settings, RecordShaping]:
    from crossfill.app.request_records import RecordShaping

    settings = command_settings()
    return settings, RecordShaping.of(command_deployment(settings))


def _records(query: ListingQuery) -> tuple[Listed, str | None]:
    """A page of rows, each with its v3 record as the API builds it, and the continuation."""
    from crossfill.app.request_records import facts_of
    from crossfill.domain.request_record import v3_record
    from crossfill.store import listing

    settings, shaping = _shaping()

    async def _page() -> tuple[Listed, str | None]:
        async with migrated_session(settings) as session:
            rows, continuation = await listing.page(session, query)
            facts = await facts_of(session, rows, shaping)
        return [(row, v3_record(f)) for row, f in zip(rows, facts, strict=True)], continuation

    return asyncio.run(_page())


def _detail(request_id: str) -> RequestDetail | None:
    from crossfill.app.request_records import detail

    settings, shaping = _shaping()

    async def _read() -> RequestDetail | None:
        async with migrated_session(settings) as session:
            return await detail(session, request_id, shaping)

    return asyncio.run(_read())


@app.command("list")
def list_requests(
    status: Annotated[str | None, typer.Option(help="Status (comma-separated: any)")] = None,
    chain: Annotated[str | None, typer.Option(help="Origin or destination chain id")] = None,
    user: Annotated[str | None, typer.Option(help="User address")] = None,
    request_id: Annotated[str | None, typer.Option("--id", help="Request id")] = None,
    order_id: Annotated[str | None, typer.Option(help="Order id")] = None,
    tx: Annotated[str | None, typer.Option(help="Any hash or address the request has")] = None,
    limit: Annotated[str | None, typer.Option(help="At most this many (1-50)")] = None,
    continuation: Annotated[str | None, typer.Option(help="The page after this one")] = None,
) -> None:
    """Requests matching every option, newest first, a page at a time (GET /requests/v3)."""
    options = {"status": status, "chainId": chain, "user": user, "id": request_id}
    options |= {"orderId": order_id, "term": tx, "limit": limit, "continuation": continuation}
    listed, after = _records(_query(options))
    table = Table("id", "status", "route", "in", "out", "created")
    for row, record in listed:
        table.add_row(
            record["id"],
            record["status"],
            f"{row.origin_chain_id} → {row.destination_chain_id}",
            f"{row.amount_in} {row.currency_in_symbol}",
            f"{row.amount_out} {row.currency_out_symbol}",
            record["createdAt"],
        )
    console.print(table)
    if after is not None:
        console.print(f"continuation: {after}", highlight=False)


@app.command("show")
def show(request_id: Annotated[str, typer.Argument(help="Request id")]) -> None:
    """One request's timeline: each step with its time, transaction and duration, then fees
    quoted vs actual and why it failed."""
    query = _query({"id": request_id})  # checks the id as the listing does
    (condition,) = query.conditions
    found = _detail(str(condition.values[0]))
    if found is None:
        raise CrossfillError(f"no request {request_id}")
    console.print(f"request {found.row.id}: {found.row.status}", highlight=False)
    steps = Table("step", "at", "took", "chain", "transaction", "block")
    for step in timeline(found.facts, found.changes):
        steps.add_row(
            step.name,
            step.at.isoformat() if step.at else "",
            f"{step.since_previous.total_seconds():g}s" if step.since_previous is not None else "",
            *(str(value) if value is not None else "" for value in (step.chain_id, step.tx_hash)),
            str(step.block) if step.block is not None else "",
        )
    console.print(steps)
    fees = Table("fee", "quoted (USD)", "actual (USD)")
    for fee in fee_rows(found.record):
        fees.add_row(fee.component, fee.quoted_usd, fee.actual_usd or "")
    console.print(fees)
    for reason in reasons(found.row.fail_reason, found.row.refund_fail_reason):
        console.print(f"{reason.what}: {reason.words} ({reason.code})", highlight=False)
