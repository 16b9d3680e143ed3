"""`crossfill contracts`: the Solidity sources compiled."""

from __future__ import annotations

import typer

from crossfill.cli.console import console

app = typer.Typer(help="Solidity contracts.")


@app.command("build")
def build_contracts(force: bool = False) -> None:
    """Compile the Solidity sources with the pinned npm solc."""
    from crossfill.contracts.build import build

    console.print("contracts compiled" if build(force=force) else "contracts up to date")
