"""`crossfill requests`: the requests GET /requests/v3 lists, and one request's timeline."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from crossfill.cli.console import console
from crossfill.cli.database import migrated_session
from crossfill.cli.environment import command_deployment, command_settings
from crossfill.cli.request_timeline import fee_rows, reasons, timeline
from crossfill.domain.listing_query import ListingError, ListingQuery, parse_listing
from crossfill.errors import CrossfillError

if TYPE_CHECKING:
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


def _records(query: ListingQuery) -> tuple[Listed, str | None]:
    """A page of rows, each with its v3 record as the API builds it, and the continuation."""
    from crossfill.domain.record_facts import CurrencyObjects, SolverFacts
    from crossfill.domain.request_record import v3_record
    from crossfill.quoting.response import currency_wire
    from crossfill.store import listing

    settings = command_settings()
    deployment = command_deployment(settings)
    currencies: CurrencyObjects = {
        (chain.id, currency.address.lower()): currency_wire(chain, currency)
        for chain in deployment.chains
        for currency in chain.currencies
    }

    def solver(row: RequestRow) -> SolverFacts:
        name = deployment.protocol_name(row.destination_chain_id)
        return SolverFacts(deployment.solver.address, name, row.destination_chain_id)

    async def _page() -> tuple[Listed, str | None]:
        async with migrated_session(settings) as session:
            rows, continuation = await listing.page(session, query)
            ids = [row.id for row in rows]
            transactions = await listing.transactions_by_request(session, ids)
            app_fees = await listing.app_fees_by_request(session, ids)
            sponsors = await listing.gas_sponsors_by_request(session, ids)
        facts = [
            listing.record_facts(
                row,
                transactions[row.id],
                app_fees[row.id],
                solver(row),
                referrer=None,  # as the API shows it without includeAuthenticatedData
                currencies=currencies,
                gas_sponsor=sponsors.get(row.id),
            )
            for row in rows
        ]
        return [(row, v3_record(f)) for row, f in zip(rows, facts, strict=True)], continuation

    return asyncio.run(_page())


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
    listed, _ = _records(_query({"id": request_id}))
    if not listed:
        raise CrossfillError(f"no request {request_id}")
    ((_, record),) = listed
    console.print(f"request {record['id']}: {record['status']}", highlight=False)
    steps = Table("step", "at", "took", "chain", "transaction", "block")
    for step in timeline(record):
        steps.add_row(
            step.name,
            step.at.isoformat() if step.at else "",
            f"{step.since_previous.total_seconds():g}s" if step.since_previous is not None else "",
            *(str(value) if value is not None else "" for value in (step.chain_id, step.tx_hash)),
            str(step.block) if step.block is not None else "",
        )
    console.print(steps)
    fees = Table("fee", "quoted (USD)", "actual (USD)")
    for fee in fee_rows(record):
        fees.add_row(fee.component, fee.quoted_usd, fee.actual_usd or "")
    console.print(fees)
    for reason in reasons(record):
        console.print(reason, highlight=False)
