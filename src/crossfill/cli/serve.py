"""`crossfill run` and `crossfill api`: the service, or an API-only replica of it."""

from __future__ import annotations

from typing import Annotated

import typer

from crossfill.cli.environment import command_deployment, command_settings
from crossfill.cli.foreground import (
    exit_on_sigterm,
    serve_until_interrupted,
    served_kinds,
    until_interrupted,
)
from crossfill.cli.options import ApiProcesses


def run(
    port: Annotated[int | None, typer.Option(help="API port")] = None,
    api_processes: ApiProcesses = None,
    workers_only: Annotated[
        bool, typer.Option(help="Run the workers without the API (beside `crossfill api`)")
    ] = False,
    ops_port: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=65535,
            help="With --workers-only: serve /metrics, /healthz and /readyz on this port",
        ),
    ] = None,
) -> None:
    """Serve the API, the chain followers and the workers on the configured deployment."""
    if ops_port is not None and not workers_only:
        raise typer.BadParameter(
            "the API serves /metrics, /healthz and /readyz on its own port; --ops-port is "
            "for --workers-only",
            param_hint="--ops-port",
        )
    settings = command_settings(port=port, api_processes=api_processes, ops_port=ops_port)
    command_deployment(settings)  # fail fast, naming the field
    exit_on_sigterm()
    if workers_only:
        from crossfill.process.server import run_workers_only

        until_interrupted(run_workers_only(settings, kinds=served_kinds(settings)))
        return
    serve_until_interrupted(settings)


def api(
    port: Annotated[int | None, typer.Option(help="API port")] = None,
    ready_fd: Annotated[int | None, typer.Option(hidden=True)] = None,
) -> None:
    """Serve the API only (a replica beside one `crossfill run`, on the same PostgreSQL
    database): no workers, no migrations."""
    from crossfill.process.server import serve_replica

    settings = command_settings(port=port)
    command_deployment(settings)
    exit_on_sigterm()
    until_interrupted(serve_replica(settings, ready_fd=ready_fd))
