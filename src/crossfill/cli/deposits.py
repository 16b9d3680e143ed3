"""`crossfill deposits`: deposits kept for nobody, with the reason."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.table import Table

from crossfill.cli.console import console
from crossfill.cli.database import migrated_session
from crossfill.cli.environment import command_settings

app = typer.Typer(help="Deposits the service holds for nobody: kept, with the reason.")


@app.command("kept")
def kept(
    limit: Annotated[int, typer.Option(min=1, help="At most this many, newest first")] = 100,
) -> None:
    """Deposits not refunded, and why: too small to pay their own refund, a token the chain
    does not serve, a payment the chain refused, or an unknown order's from before this
    database watched the chain."""
    from crossfill.store import deposits

    settings = command_settings()

    async def _kept() -> list[Any]:
        async with migrated_session(settings) as session:
            return await deposits.kept(session, limit=limit)

    table = Table("chain", "transaction", "log", "part", "depositor", "currency", "amount")
    table.add_column("verdict")
    table.add_column("kept because")
    for row in asyncio.run(_kept()):
        table.add_row(
            *(str(row.chain_id), row.tx_hash, str(row.log_index), str(row.part), row.depositor),
            *(row.currency, row.amount, row.outcome or "", row.refund_fail_reason or ""),
        )
    console.print(table)
