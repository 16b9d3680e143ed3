"""`crossfill config`: the deployment file checked."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from crossfill.cli.console import console
from crossfill.cli.environment import command_deployment, command_settings
from crossfill.kinds.evm.config import evm_chains

app = typer.Typer(help="Deployment file.")


@app.command("check")
def check(
    file: Annotated[
        Path | None, typer.Argument(help="Deployment file (default: configured)")
    ] = None,
) -> None:
    """Validate a deployment file; errors name the field."""
    settings = command_settings()
    path = file or settings.deployment_path
    deployment = command_deployment(settings, path)
    console.print(f"{path}: ok ({len(evm_chains(deployment))} chains)")
