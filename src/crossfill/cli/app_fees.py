"""`crossfill app-fees`: what integrators' recipient wallets have earned."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.table import Table

from crossfill.cli.console import console
from crossfill.cli.database import migrated_session
from crossfill.cli.environment import command_deployment, command_settings
from crossfill.kinds.evm.config import evm_chain

app = typer.Typer(help="App fees earned by integrators' recipient wallets.")


@app.command("balances")
def balances(
    wallet: Annotated[str, typer.Argument(help="The app-fee recipient's address")],
) -> None:
    """What a recipient has earned: owed (held by the service until claimed with
    POST /app-fees/{wallet}/claim), claiming (a claim's payout on its way) and paid."""
    from crossfill.quoting.money import format_units
    from crossfill.store import app_fees

    settings = command_settings()
    deployment = command_deployment(settings)

    async def _balances() -> list[app_fees.Balance]:
        async with migrated_session(settings) as session:
            return await app_fees.balances(session, wallet)

    table = Table("chain", "currency", "state", "amount", "formatted", "requests")
    for entry in asyncio.run(_balances()):
        chain = evm_chain(deployment, entry.chain_id)
        currency = chain.currency(entry.currency) if chain else None
        formatted = (
            f"{format_units(entry.amount, currency.decimals)} {currency.symbol}" if currency else ""
        )
        table.add_row(
            str(entry.chain_id),
            entry.currency,
            entry.state,
            str(entry.amount),
            formatted,
            str(entry.requests),
        )
    console.print(table)
