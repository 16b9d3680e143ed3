"""`crossfill books`: the books of each EVM chain, reconciled with the chain, as tables."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from crossfill.cli.console import console
from crossfill.cli.environment import command_deployment, command_settings
from crossfill.cli.options import chain_id_parameter
from crossfill.errors import CrossfillError

if TYPE_CHECKING:
    from crossfill.app.books import ChainBooks


def books(
    chain_id: Annotated[
        int | None,
        typer.Option("--chain", parser=chain_id_parameter, help="One chain's books alone"),
    ] = None,
) -> None:
    """Escrow owed to users, owed to the solver, app fees owed, fees earned and gas spent per
    chain and currency, and each Depository's and key's balance on chain against its books, to
    the wei (exit status 2 when a difference is unexplained)."""
    from crossfill.app.books import reconcile_chain
    from crossfill.kinds.evm.client import EvmClient
    from crossfill.metrics import Metrics
    from crossfill.store.db import create_engine, session_factory
    from crossfill.store.migrate import upgrade_async

    settings = command_settings()
    deployment = command_deployment(settings)
    chains = [chain for chain in deployment.chains if chain_id in (None, chain.id)]
    if not chains:
        raise CrossfillError(f"chain {chain_id} is not an EVM chain in {settings.deployment_path}")

    async def _reconciled() -> list[tuple[ChainBooks, dict[str, int]]]:
        await upgrade_async(settings.database)
        engine = create_engine(settings.database)
        metrics = Metrics()
        found = []
        try:
            for chain in chains:
                client = EvmClient(
                    chain.id, chain.rpc_url, timeout_seconds=settings.rpc_timeout_seconds,
                    metrics=metrics,
                )  # fmt: skip
                try:
                    report = await reconcile_chain(
                        session_factory(engine), client, chain, deployment.solver.address,
                        now=lambda: datetime.now(UTC),
                    )  # fmt: skip
                finally:
                    await client.close()
                decimals = {c.address.lower(): c.decimals for c in chain.currencies}
                found.append((report, decimals))
        finally:
            await engine.dispose()
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
