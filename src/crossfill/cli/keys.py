"""`crossfill keys`: integrators' API keys, created, listed, revoked and sponsored."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.table import Table

from crossfill.cli.console import console
from crossfill.cli.database import migrated_session
from crossfill.cli.environment import command_deployment, command_settings
from crossfill.cli.options import KeyReference, chain_id_parameter
from crossfill.errors import CrossfillError

app = typer.Typer(help="Integrators' API keys (stored only as hashes).")


@app.command("create")
def create(name: Annotated[str, typer.Option(help="Who the key is for")]) -> None:
    """Create a key. It is printed on the last line, this once only."""
    from crossfill.store import api_keys

    settings = command_settings()

    async def _create() -> api_keys.CreatedKey:
        async with migrated_session(settings) as session, session.begin():
            return await api_keys.create(session, name, now=datetime.now(UTC))

    created = asyncio.run(_create())
    console.print(f"API key {created.row.id} ({name}) created; store it now, it is not kept:")
    print(created.secret)


@app.command("list")
def list_keys() -> None:
    """Every key: id, name, shown prefix, created, revoked."""
    from crossfill.store import api_keys

    settings = command_settings()

    async def _all() -> list[Any]:
        async with migrated_session(settings) as session:
            return await api_keys.all_keys(session)

    table = Table("id", "name", "prefix", "created", "revoked")
    for key in asyncio.run(_all()):
        revoked = api_keys.iso(key.revoked_at) if key.revoked_at else ""
        table.add_row(str(key.id), key.name, key.prefix, api_keys.iso(key.created_at), revoked)
    console.print(table)


@app.command("revoke")
def revoke(
    key: KeyReference,
) -> None:
    """Revoke a key: it stops authenticating within seconds in every process."""
    from crossfill.store import api_keys

    settings = command_settings()

    async def _revoke() -> int:
        async with migrated_session(settings) as session, session.begin():
            row = await api_keys.find(session, key)
            if row is None:
                raise CrossfillError(f"no API key matches {key!r}")
            await api_keys.revoke(session, row, now=datetime.now(UTC))
            return row.id

    console.print(f"API key {asyncio.run(_revoke())} revoked")


@app.command("sponsor")
def set_sponsor(
    key: KeyReference,
    wallet: Annotated[str | None, typer.Option(help="Sponsor wallet address")] = None,
    chain: Annotated[
        int | None, typer.Option(parser=chain_id_parameter, help="Chain id the sponsor pays on")
    ] = None,
    currency: Annotated[str | None, typer.Option(help="ERC-20 the sponsor pays in")] = None,
    clear: Annotated[bool, typer.Option(help="Remove the key's sponsor wallet")] = False,
) -> None:
    """Set the wallet that pays this key's sponsored fees (it must approve the solver)."""
    from crossfill.quoting.sponsorship import SponsorWallet, sponsor_wallet
    from crossfill.store import api_keys

    settings = command_settings()
    deployment = command_deployment(settings)
    sponsor: SponsorWallet | None = None
    if not clear:
        if wallet is None or chain is None or currency is None:
            raise CrossfillError("give --wallet, --chain and --currency, or --clear")
        sponsor = sponsor_wallet(deployment, wallet, chain, currency)

    async def _set() -> int:
        async with migrated_session(settings) as session, session.begin():
            row = await api_keys.find(session, key)
            if row is None:
                raise CrossfillError(f"no API key matches {key!r}")
            api_keys.set_sponsor(row, sponsor)
            return row.id

    key_id = asyncio.run(_set())
    shown = "cleared" if sponsor is None else f"{sponsor.address} pays on chain {sponsor.chain_id}"
    console.print(f"API key {key_id} sponsor wallet: {shown}")
    if sponsor is not None:
        console.print(f"The wallet must approve the solver {deployment.solver.address}")
