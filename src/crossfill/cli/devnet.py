"""`crossfill devnet`: the local devnet, and crediting accounts on its perps exchange."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from crossfill.cli.console import console
from crossfill.cli.environment import command_deployment, command_settings
from crossfill.cli.foreground import exit_on_sigterm, serve_until_interrupted
from crossfill.cli.options import ApiProcesses
from crossfill.errors import CrossfillError

if TYPE_CHECKING:
    from crossfill.devnet.peer import PeerService
    from crossfill.settings import Settings

app = typer.Typer(help="The local devnet: anvil chains, the SVM node, the perps exchange.")


@app.callback(invoke_without_command=True)
def devnet(
    context: typer.Context,
    chains: Annotated[int, typer.Option(min=1, max=8, help="Number of anvil chains")] = 2,
    block_time: Annotated[
        float,
        typer.Option(min=0, help="Seconds per block (fractions too: 0.25); 0 = automine"),
    ] = 1,
    hardfork: Annotated[str, typer.Option(help="EVM hardfork for anvil")] = "prague",
    lag_threshold: Annotated[
        float | None, typer.Option(help="Seconds without a block before a chain is lagging")
    ] = None,
    port: Annotated[int | None, typer.Option(help="API port (default 8000)")] = None,
    chains_only: Annotated[bool, typer.Option(help="Run the chains without the service")] = False,
    svm: Annotated[bool, typer.Option(help="Also run the devnet SVM chain (792703809)")] = True,
    exchange: Annotated[
        bool, typer.Option(help="Also run the devnet perps exchange (1337)")
    ] = True,
    api_processes: ApiProcesses = None,
    peer: Annotated[
        bool,
        typer.Option(
            help="Also run the peer deployment: a second, independent Crossfill on the same "
            "chains (its own keys, contracts, database and port; docs/treasury.md)"
        ),
    ] = False,
    peer_port: Annotated[
        int, typer.Option(min=1, max=65535, help="The peer deployment's API port")
    ] = 8001,
) -> None:
    """Start anvil chains, deploy and seed everything, then serve the API on them."""
    if context.invoked_subcommand is not None:
        return
    from crossfill.devnet.network import DevnetOptions, start_devnet
    from crossfill.devnet.summary import print_peer, print_summary

    settings = command_settings(port=port, api_processes=api_processes)
    if peer and peer_port == settings.port:
        raise typer.BadParameter("the peer needs a port of its own", param_hint="--peer-port")
    options = DevnetOptions(
        chain_count=chains,
        block_time=block_time,
        hardfork=hardfork,
        lag_threshold_seconds=lag_threshold,
        svm=svm,
        exchange=exchange,
        peer=peer,
        peer_port=peer_port if peer else None,
    )
    exit_on_sigterm()
    with console.status("starting devnet chains…"):
        network = start_devnet(
            options,
            deployment_path=settings.deployment_path,
            log_dir=settings.home / "logs",
            progress=console.log,
        )
    peer_service = None
    try:
        if peer:
            peer_service = _start_peer(settings, peer_port)
        print_summary(
            console,
            settings,
            command_deployment(settings),
            chains_only=chains_only,
        )
        if peer_service is not None:
            print_peer(console, peer_service)
        if chains_only:
            while True:
                signal.pause()
        else:
            serve_until_interrupted(settings)
    except KeyboardInterrupt:
        pass
    finally:
        if peer_service is not None:
            peer_service.stop()
        network.stop()
        console.print("devnet stopped")


def _start_peer(settings: Settings, port: int) -> PeerService:
    from crossfill.devnet.peer import peer_home, start_peer_service

    with console.status("starting the peer deployment…"):
        return start_peer_service(
            peer_home(settings.deployment_path.parent),
            port=port,
            log_path=settings.home / "logs" / "peer-service.log",
        )


@app.command("fund-exchange")
def fund_exchange(
    user: Annotated[str, typer.Option(help="The exchange account (0x address) to credit")],
    usd: Annotated[str | None, typer.Option(help="Perps USDC to credit, as a decimal")] = None,
    token: Annotated[
        str | None, typer.Option(help="A spot token's name (USDC, HYPE) to credit instead")
    ] = None,
    amount: Annotated[str | None, typer.Option(help="The spot token amount, as a decimal")] = None,
) -> None:
    """Credit an account on the running devnet perps exchange (devnet only)."""
    from crossfill.devnet.exchange.deployment import exchange_url
    from crossfill.devnet.exchange.process import fund
    from crossfill.domain.identifiers import is_address
    from crossfill.settings import Mode

    settings = command_settings()
    if settings.mode is not Mode.DEVNET:
        raise typer.BadParameter("fund-exchange works on the devnet only")
    if not is_address(user):
        raise typer.BadParameter("--user must be a 0x-prefixed 20-byte hex address")
    if (usd is None) == (token is None) or (token is not None and amount is None):
        raise typer.BadParameter("give --usd AMOUNT, or --token NAME --amount AMOUNT")
    url = exchange_url(command_deployment(settings))
    if url is None:
        raise typer.BadParameter("the deployment file has no [perps] exchange: start the devnet")
    try:
        if token is None:
            fund(url, user, str(usd))
        else:
            fund(url, user, str(amount), token)
    except CrossfillError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(1) from None
    what = f"{usd} USD (perps)" if token is None else f"{amount} {token} (spot)"
    console.print(f"credited {what} to {user}")
