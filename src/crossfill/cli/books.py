"""`crossfill books`: the books of each chain, of every kind, reconciled with the chain, as
tables."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from crossfill.cli.console import console
from crossfill.cli.environment import command_settings
from crossfill.cli.foreground import served_kinds
from crossfill.cli.options import chain_id_parameter
from crossfill.errors import BadRequest, CrossfillError

if TYPE_CHECKING:
    from crossfill.app.books import ChainBooks


def books(
    chain_id: Annotated[
        int | None,
        typer.Option("--chain", parser=chain_id_parameter, help="One chain's books alone"),
    ] = None,
) -> None:
    """Escrow owed to users, owed to the solver, app fees owed, fees earned and gas spent per
    chain and currency, and each account's balance on chain (Depositories, keys, the SVM vault,
    the solver's exchange account) against its books, to the smallest unit (exit status 2 when
    a difference is unexplained)."""
    from crossfill.app.books import readers_of, reconcile_chain
    from crossfill.runtime import Runtime
    from crossfill.store.migrate import upgrade_async

    settings = command_settings()

    async def _reconciled() -> list[tuple[ChainBooks, dict[str, int]]]:
        await upgrade_async(settings.database)
        runtime = Runtime.build(settings, kinds=served_kinds(settings))
        found = []
        try:
            try:
                readers = readers_of(runtime, chain_id)
            except BadRequest:
                raise CrossfillError(
                    f"chain {chain_id} is not a chain in {settings.deployment_path}"
                ) from None
            for reader in readers:
                report = await reconcile_chain(
                    runtime.sessions, reader, now=lambda: datetime.now(UTC)
                )
                decimals = {c.key: c.decimals for c in reader.currencies()}
                found.append((report, decimals))
        finally:
            await runtime.close()
        return found

    unexplained = False
    for report, decimals in asyncio.run(_reconciled()):
        console.print(_owed_table(report, decimals))
        console.print(_reconciled_table(report))
        unexplained = unexplained or bool(report.unexplained)
    if unexplained:
        raise typer.Exit(2)


def _units(amount: int, decimals: int) -> str:
    """`amount` in whole units, every digit kept."""
    sign = "-" if amount < 0 else ""
    whole, fraction = divmod(abs(amount), 10**decimals)
    shown = f"{whole:,}"
    if decimals and fraction:
        shown += "." + str(fraction).rjust(decimals, "0").rstrip("0")
    return sign + shown


def _owed_table(report: ChainBooks, decimals: dict[str, int]) -> Table:
    table = Table(
        "currency", "owed to users", "owed to solver", "app fees owed", "fees earned",
        "gas spent", "in transit out", "arriving", title=f"chain {report.chain_id}: books",
    )  # fmt: skip
    for row in report.currencies:
        places = decimals.get(row.currency, 0)
        amounts = (
            row.owed_to_users, row.owed_to_solver, row.app_fees_owed, row.fees_earned,
            row.gas_spent, row.in_transit, row.arriving,
        )  # fmt: skip
        table.add_row(row.symbol, *(_units(amount, places) for amount in amounts))
    return table


def _reconciled_table(report: ChainBooks) -> Table:
    table = Table(
        "account", "currency", "on chain", "books", "explained", "unexplained",
        title=f"chain {report.chain_id}: reconciliation (smallest units)",
    )  # fmt: skip
    for row in report.reconciled:
        found = row.found
        explained = "; ".join(f"{cause}: {amount}" for cause, amount in found.explained)
        unexplained = (
            "0"
            if not found.unexplained
            else f"[red]{found.unexplained}[/red] ({found.unexplained_cause})"
        )
        table.add_row(
            row.account, row.symbol, str(found.on_chain), str(found.booked), explained,
            unexplained,
        )  # fmt: skip
    return table
