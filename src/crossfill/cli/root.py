"""The `crossfill` command: its groups registered, and errors reported as one line."""

from __future__ import annotations

import typer
from rich.markup import escape

from crossfill.cli import (
    app_fees,
    books,
    chains,
    config,
    contracts,
    db,
    deposits,
    devnet,
    keys,
    requests,
    serve,
    solvers,
    webhooks,
)
from crossfill.cli.console import console
from crossfill.errors import CrossfillError

app = typer.Typer(
    help="Crossfill: cross-chain intent execution service.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command()(serve.run)
app.command()(serve.api)
app.command()(books.books)
app.add_typer(chains.app, name="chains")
app.add_typer(db.app, name="db")
app.add_typer(config.app, name="config")
app.add_typer(contracts.app, name="contracts")
app.add_typer(keys.app, name="keys")
app.add_typer(webhooks.app, name="webhooks")
app.add_typer(solvers.app, name="solvers")
app.add_typer(app_fees.app, name="app-fees")
app.add_typer(deposits.app, name="deposits")
app.add_typer(requests.app, name="requests")
app.add_typer(devnet.app, name="devnet")


def main() -> None:
    try:
        app()
    except CrossfillError as exc:
        # Escaped: messages quote user input (a header name like "[x]" would read as markup).
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        raise SystemExit(1) from None
