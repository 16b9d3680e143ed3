"""`crossfill chains`: the configured chains, disabled and enabled without a restart."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.table import Table

from crossfill.cli.console import console
from crossfill.cli.database import migrated_session
from crossfill.cli.environment import command_deployment, command_settings
from crossfill.cli.options import ChainIdArgument
from crossfill.errors import CrossfillError
from crossfill.kinds.evm.config import evm_chains

app = typer.Typer(help="Inspect chains and toggle them without a restart.")


@app.command("list")
def list_chains() -> None:
    """Configured chains and their operator overrides."""
    from crossfill.store import chain_controls

    settings = command_settings()
    deployment = command_deployment(settings)

    async def _controls() -> dict[int, tuple[bool, str | None]]:
        async with migrated_session(settings) as session:
            return {
                c.chain_id: (c.disabled, c.reason)
                for c in await chain_controls.all_controls(session)
            }

    controls = asyncio.run(_controls())
    table = Table("id", "name", "rpc", "disabled", "reason")
    for chain in evm_chains(deployment):
        disabled, reason = controls.get(chain.id, (chain.disabled, None))
        table.add_row(
            str(chain.id), chain.name, chain.http_rpc_url, str(disabled).lower(), reason or ""
        )
    console.print(table)


@app.command("disable")
def disable(
    chain_id: ChainIdArgument,
    reason: Annotated[str | None, typer.Option(help="Shown as statusMessage")] = None,
) -> None:
    """Disable a chain now: /chains reports it disabled without a restart."""
    _set_disabled(chain_id, disabled=True, reason=reason)


@app.command("enable")
def enable(chain_id: ChainIdArgument) -> None:
    """Enable a chain again."""
    _set_disabled(chain_id, disabled=False, reason=None)


def _set_disabled(chain_id: int, *, disabled: bool, reason: str | None) -> None:
    from crossfill.store import chain_controls

    settings = command_settings()
    deployment = command_deployment(settings)
    if not deployment.serves(chain_id):
        raise CrossfillError(f"chain {chain_id} is not in {settings.deployment_path}")

    async def _apply() -> None:
        async with migrated_session(settings) as session, session.begin():
            await chain_controls.set_disabled(session, chain_id, disabled=disabled, reason=reason)

    asyncio.run(_apply())
    console.print(f"chain {chain_id} {'disabled' if disabled else 'enabled'}")
