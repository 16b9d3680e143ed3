"""`crossfill` command line: devnet, run, chains, keys, db, config, contracts."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.config import load_deployment
from crossfill.domain.identifiers import InvalidIdentifier, parse_chain_id
from crossfill.errors import CrossfillError
from crossfill.log_setup import configure_logging
from crossfill.settings import Mode, Settings, load_settings

if TYPE_CHECKING:
    from crossfill.kinds.port import ChainKind

app = typer.Typer(
    help="Crossfill: cross-chain intent execution service.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
chains_app = typer.Typer(help="Inspect chains and toggle them without a restart.")
db_app = typer.Typer(help="Database schema and retention.")
config_app = typer.Typer(help="Deployment file.")
contracts_app = typer.Typer(help="Solidity contracts.")
keys_app = typer.Typer(help="Integrators' API keys (stored only as hashes).")
webhooks_app = typer.Typer(help="Each API key's webhook endpoint and its deliveries.")
app_fees_app = typer.Typer(help="App fees earned by integrators' recipient wallets.")
deposits_app = typer.Typer(help="Deposits the service holds for nobody: kept, with the reason.")
devnet_app = typer.Typer(help="The local devnet: anvil chains, the SVM node, the perps exchange.")
app.add_typer(chains_app, name="chains")
app.add_typer(db_app, name="db")
app.add_typer(config_app, name="config")
app.add_typer(contracts_app, name="contracts")
app.add_typer(keys_app, name="keys")
app.add_typer(webhooks_app, name="webhooks")
app.add_typer(app_fees_app, name="app-fees")
app.add_typer(deposits_app, name="deposits")
app.add_typer(devnet_app, name="devnet")
console = Console()
T = TypeVar("T")
KeyReference = Annotated[str, typer.Argument(help="API key id, its shown prefix, or the key")]


def _chain_id(text: str) -> int:
    """Chain ids as the API takes them: ASCII digits (click's int() takes any Unicode digit)."""
    try:
        return parse_chain_id(text, "chain id")
    except InvalidIdentifier as exc:
        raise typer.BadParameter(str(exc)) from None


ChainIdArgument = Annotated[int, typer.Argument(parser=_chain_id, help="Chain id")]
ApiProcesses = Annotated[
    int | None,
    typer.Option(min=1, help="API processes sharing the port (more than 1 needs PostgreSQL)"),
]


def _settings(**overrides: object) -> Settings:
    settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
    configure_logging(
        json_logs=settings.json_logs, level=settings.log_level, secrets=settings.secret_values()
    )
    return settings


def _exit_on_sigterm() -> None:
    """SIGTERM stops the process as Ctrl-C does, so `finally` blocks stop workers and child
    processes: inside the event loop's runner by cancelling its main task (the runner's own
    SIGINT handler), elsewhere by KeyboardInterrupt. Raised from this handler inside the
    loop, KeyboardInterrupt would land in whatever code ran at that instant (a worker's
    database call, a driver's callback) and could leave the process unable to stop."""

    def _interrupt(_signum: int, frame: FrameType | None) -> None:
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint) and on_sigint is not signal.default_int_handler:
            on_sigint(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)


@devnet_app.callback(invoke_without_command=True)
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
) -> None:
    """Start anvil chains, deploy and seed everything, then serve the API on them."""
    if context.invoked_subcommand is not None:
        return
    from crossfill.devnet.network import DevnetOptions, start_devnet
    from crossfill.devnet.summary import print_summary

    settings = _settings(port=port, api_processes=api_processes)
    options = DevnetOptions(
        chain_count=chains,
        block_time=block_time,
        hardfork=hardfork,
        lag_threshold_seconds=lag_threshold,
        svm=svm,
        exchange=exchange,
    )
    _exit_on_sigterm()
    with console.status("starting devnet chains…"):
        network = start_devnet(
            options,
            deployment_path=settings.deployment_path,
            log_dir=settings.home / "logs",
            progress=console.log,
        )
    try:
        print_summary(
            console,
            settings,
            load_deployment(settings.deployment_path, mode=settings.mode),
            chains_only=chains_only,
        )
        if chains_only:
            while True:
                signal.pause()
        else:
            _serve(settings)
    except KeyboardInterrupt:
        pass
    finally:
        network.stop()
        console.print("devnet stopped")


@devnet_app.command("fund-exchange")
def devnet_fund_exchange(
    user: Annotated[str, typer.Option(help="The exchange account (0x address) to credit")],
    usd: Annotated[str | None, typer.Option(help="Perps USDC to credit, as a decimal")] = None,
    token: Annotated[
        str | None, typer.Option(help="A spot token's name (USDC, HYPE) to credit instead")
    ] = None,
    amount: Annotated[str | None, typer.Option(help="The spot token amount, as a decimal")] = None,
) -> None:
    """Credit an account on the running devnet perps exchange (devnet only)."""
    from crossfill.devnet.exchange.process import fund
    from crossfill.domain.identifiers import is_address

    settings = _settings()
    if settings.mode is not Mode.DEVNET:
        raise typer.BadParameter("fund-exchange works on the devnet only")
    if not is_address(user):
        raise typer.BadParameter("--user must be a 0x-prefixed 20-byte hex address")
    if (usd is None) == (token is None) or (token is not None and amount is None):
        raise typer.BadParameter("give --usd AMOUNT, or --token NAME --amount AMOUNT")
    perps = load_deployment(settings.deployment_path, mode=settings.mode).perps
    if perps is None:
        raise typer.BadParameter("the deployment file has no [perps] exchange: start the devnet")
    try:
        if token is None:
            fund(perps.rpc_url, user, str(usd))
        else:
            fund(perps.rpc_url, user, str(amount), token)
    except CrossfillError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(1) from None
    what = f"{usd} USD (perps)" if token is None else f"{amount} {token} (spot)"
    console.print(f"credited {what} to {user}")


def _serve(settings: Settings) -> None:
    from crossfill.process.server import serve

    _until_interrupted(serve(settings, kinds=_kinds(settings)))


def _kinds(settings: Settings) -> Sequence[ChainKind]:
    """The kinds of chain served; in devnet mode only, the devnet's own (their keys resolve
    its key references: the devnet's deployment file, served by `crossfill devnet` or by
    `crossfill run` beside `crossfill devnet --chains-only`). Production never loads them."""
    from crossfill.kinds.registry import KINDS

    if settings.mode is not Mode.DEVNET:
        return KINDS
    from crossfill.devnet.kinds import devnet_kinds

    return devnet_kinds()


def _until_interrupted(service: Coroutine[Any, Any, None]) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        _event_loop_runner()(service)


def _event_loop_runner() -> Callable[[Coroutine[Any, Any, None]], None]:
    """uvloop where it is installed (its loop cuts the per-request cost of the API and the
    RPC clients), the standard loop otherwise."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run
    return uvloop.run


@app.command()
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
    settings = _settings(port=port, api_processes=api_processes, ops_port=ops_port)
    load_deployment(settings.deployment_path, mode=settings.mode)  # fail fast, naming the field
    _exit_on_sigterm()
    if workers_only:
        from crossfill.process.server import run_workers_only

        _until_interrupted(run_workers_only(settings, kinds=_kinds(settings)))
        return
    _serve(settings)


@app.command()
def api(
    port: Annotated[int | None, typer.Option(help="API port")] = None,
    ready_fd: Annotated[int | None, typer.Option(hidden=True)] = None,
) -> None:
    """Serve the API only (a replica beside one `crossfill run`, on the same PostgreSQL
    database): no workers, no migrations."""
    from crossfill.process.server import serve_replica

    settings = _settings(port=port)
    load_deployment(settings.deployment_path, mode=settings.mode)
    _exit_on_sigterm()
    _until_interrupted(serve_replica(settings, ready_fd=ready_fd))


@chains_app.command("list")
def chains_list() -> None:
    """Configured chains and their operator overrides."""
    from crossfill.store import chain_controls

    settings = _settings()
    deployment = load_deployment(settings.deployment_path, mode=settings.mode)

    async def _controls() -> dict[int, tuple[bool, str | None]]:
        async with _session(settings) as session:
            return {
                c.chain_id: (c.disabled, c.reason)
                for c in await chain_controls.all_controls(session)
            }

    controls = asyncio.run(_controls())
    table = Table("id", "name", "rpc", "disabled", "reason")
    for chain in deployment.chains:
        disabled, reason = controls.get(chain.id, (chain.disabled, None))
        table.add_row(
            str(chain.id), chain.name, chain.http_rpc_url, str(disabled).lower(), reason or ""
        )
    console.print(table)


@chains_app.command("disable")
def chains_disable(
    chain_id: ChainIdArgument,
    reason: Annotated[str | None, typer.Option(help="Shown as statusMessage")] = None,
) -> None:
    """Disable a chain now: /chains reports it disabled without a restart."""
    _set_disabled(chain_id, disabled=True, reason=reason)


@chains_app.command("enable")
def chains_enable(chain_id: ChainIdArgument) -> None:
    """Enable a chain again."""
    _set_disabled(chain_id, disabled=False, reason=None)


def _set_disabled(chain_id: int, *, disabled: bool, reason: str | None) -> None:
    from crossfill.store import chain_controls

    settings = _settings()
    deployment = load_deployment(settings.deployment_path, mode=settings.mode)
    perps_id = deployment.perps.id if deployment.perps is not None else None
    if (
        deployment.chain(chain_id) is None
        and deployment.svm_chain(chain_id) is None
        and (chain_id != perps_id)
    ):
        raise CrossfillError(f"chain {chain_id} is not in {settings.deployment_path}")

    async def _apply() -> None:
        async with _session(settings) as session, session.begin():
            await chain_controls.set_disabled(session, chain_id, disabled=disabled, reason=reason)

    asyncio.run(_apply())
    console.print(f"chain {chain_id} {'disabled' if disabled else 'enabled'}")


@contextlib.asynccontextmanager
async def _session(settings: Settings) -> AsyncIterator[AsyncSession]:
    from crossfill.store.db import create_engine, session_factory
    from crossfill.store.migrate import upgrade_async

    await upgrade_async(settings.database)
    engine = create_engine(settings.database)
    try:
        async with session_factory(engine)() as session:
            yield session
    finally:
        await engine.dispose()


@app_fees_app.command("balances")
def app_fees_balances(
    wallet: Annotated[str, typer.Argument(help="The app-fee recipient's address")],
) -> None:
    """What a recipient has earned: owed (held by the service until claimed with
    POST /app-fees/{wallet}/claim), claiming (a claim's payout on its way) and paid."""
    from crossfill.quoting.money import format_units
    from crossfill.store import app_fees

    settings = _settings()
    deployment = load_deployment(settings.deployment_path, mode=settings.mode)

    async def _balances() -> list[app_fees.Balance]:
        async with _session(settings) as session:
            return await app_fees.balances(session, wallet)

    table = Table("chain", "currency", "state", "amount", "formatted", "requests")
    for entry in asyncio.run(_balances()):
        chain = deployment.chain(entry.chain_id)
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


@deposits_app.command("kept")
def deposits_kept(
    limit: Annotated[int, typer.Option(min=1, help="At most this many, newest first")] = 100,
) -> None:
    """Deposits not refunded, and why: too small to pay their own refund, a token the chain
    does not serve, a payment the chain refused, or an unknown order's from before this
    database watched the chain."""
    from crossfill.store import deposits

    settings = _settings()

    async def _kept() -> list[Any]:
        async with _session(settings) as session:
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


@keys_app.command("create")
def keys_create(name: Annotated[str, typer.Option(help="Who the key is for")]) -> None:
    """Create a key. It is printed on the last line, this once only."""
    from crossfill.store import api_keys

    settings = _settings()

    async def _create() -> api_keys.CreatedKey:
        async with _session(settings) as session, session.begin():
            return await api_keys.create(session, name, now=datetime.now(UTC))

    created = asyncio.run(_create())
    console.print(f"API key {created.row.id} ({name}) created; store it now, it is not kept:")
    print(created.secret)


@keys_app.command("list")
def keys_list() -> None:
    """Every key: id, name, shown prefix, created, revoked."""
    from crossfill.store import api_keys

    settings = _settings()

    async def _all() -> list[Any]:
        async with _session(settings) as session:
            return await api_keys.all_keys(session)

    table = Table("id", "name", "prefix", "created", "revoked")
    for key in asyncio.run(_all()):
        revoked = api_keys.iso(key.revoked_at) if key.revoked_at else ""
        table.add_row(str(key.id), key.name, key.prefix, api_keys.iso(key.created_at), revoked)
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(
    key: KeyReference,
) -> None:
    """Revoke a key: it stops authenticating within seconds in every process."""
    from crossfill.store import api_keys

    settings = _settings()

    async def _revoke() -> int:
        async with _session(settings) as session, session.begin():
            row = await api_keys.find(session, key)
            if row is None:
                raise CrossfillError(f"no API key matches {key!r}")
            await api_keys.revoke(session, row, now=datetime.now(UTC))
            return row.id

    console.print(f"API key {asyncio.run(_revoke())} revoked")


@keys_app.command("sponsor")
def keys_sponsor(
    key: KeyReference,
    wallet: Annotated[str | None, typer.Option(help="Sponsor wallet address")] = None,
    chain: Annotated[
        int | None, typer.Option(parser=_chain_id, help="Chain id the sponsor pays on")
    ] = None,
    currency: Annotated[str | None, typer.Option(help="ERC-20 the sponsor pays in")] = None,
    clear: Annotated[bool, typer.Option(help="Remove the key's sponsor wallet")] = False,
) -> None:
    """Set the wallet that pays this key's sponsored fees (it must approve the solver)."""
    from crossfill.quoting.sponsorship import SponsorWallet, sponsor_wallet
    from crossfill.store import api_keys

    settings = _settings()
    deployment = load_deployment(settings.deployment_path, mode=settings.mode)
    sponsor: SponsorWallet | None = None
    if not clear:
        if wallet is None or chain is None or currency is None:
            raise CrossfillError("give --wallet, --chain and --currency, or --clear")
        sponsor = sponsor_wallet(deployment, wallet, chain, currency)

    async def _set() -> int:
        async with _session(settings) as session, session.begin():
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


@webhooks_app.command("set")
def webhooks_set(
    api_key: Annotated[str, typer.Argument(help="The API key itself: it signs deliveries")],
    url: str,
    header: Annotated[list[str] | None, typer.Option(help="Extra header NAME=VALUE")] = None,
) -> None:
    """Send this key's status events to URL (replaces any earlier endpoint)."""
    from crossfill.webhooks import config

    settings = _settings()

    async def _set() -> int:
        async with _session(settings) as session, session.begin():
            headers = config.parse_headers(header or [])
            configured = await config.set_endpoint(session, settings, api_key, url, headers)
            return configured.key.id

    console.print(f"API key {_run_webhook_config(_set())}: webhook set to {url}")


@webhooks_app.command("show")
def webhooks_show(key: KeyReference) -> None:
    """The key's endpoint, its headers (names only) and delivery counts."""
    from crossfill.store import webhook_endpoints
    from crossfill.webhooks import config

    settings = _settings()

    async def _show() -> str:
        async with _session(settings) as session:
            found = await config.find_key(session, key)
            endpoint = await webhook_endpoints.get(session, found.id)
            if endpoint is None:
                return f"API key {found.id}: no webhook"
            names = ", ".join(sorted(endpoint.headers)) or "none"
            return f"API key {found.id}: {endpoint.url} (extra headers: {names})"

    console.print(_run_webhook_config(_show()))


@webhooks_app.command("remove")
def webhooks_remove(
    key: KeyReference,
) -> None:
    """Stop sending this key's events (pending ones are then skipped)."""
    from crossfill.store import webhook_endpoints
    from crossfill.webhooks import config

    settings = _settings()

    async def _remove() -> str:
        async with _session(settings) as session, session.begin():
            found = await config.find_key(session, key)
            removed = await webhook_endpoints.remove(session, found.id)
            return f"API key {found.id}: webhook {'removed' if removed else 'was not set'}"

    console.print(_run_webhook_config(_remove()))


@webhooks_app.command("replay")
def webhooks_replay(
    key: KeyReference,
) -> None:
    """Send this key's failed deliveries again, in order, with fresh retries."""
    from crossfill.webhooks import config

    settings = _settings()

    async def _replay() -> int:
        async with _session(settings) as session, session.begin():
            found = await config.find_key(session, key)
            return await config.replay_failed(session, found.id, now=datetime.now(UTC))

    console.print(f"{_run_webhook_config(_replay())} failed deliveries queued again")


def _run_webhook_config(work: Coroutine[Any, Any, T]) -> T:
    from crossfill.webhooks.config import WebhookConfigError

    try:
        return asyncio.run(work)
    except WebhookConfigError as exc:
        raise CrossfillError(str(exc)) from exc


@db_app.command("upgrade")
def db_upgrade(revision: str = "head") -> None:
    """Apply migrations up to REVISION."""
    from crossfill.store.migrate import upgrade

    settings = _settings()
    upgrade(settings.database, revision)
    console.print(f"database at {revision}")


@db_app.command("prune-quotes")
def db_prune_quotes(
    expired_days: Annotated[
        float,
        typer.Option(min=1, help="Prune quotes expired at least this many days ago."),
    ] = 7,
    dry_run: Annotated[bool, typer.Option(help="Only count what would be pruned.")] = False,
) -> None:
    """Delete quotes nobody deposited for, long expired (docs/deployment-file.md#retention)."""
    settings = _settings()
    expired_before = datetime.now(UTC) - timedelta(days=expired_days)
    count = asyncio.run(_prune_quotes(settings, expired_before, dry_run=dry_run))
    verb = "would prune" if dry_run else "pruned"
    console.print(f"{verb} {count} quotes expired before {expired_before:%Y-%m-%d %H:%M} UTC")


async def _prune_quotes(settings: Settings, expired_before: datetime, *, dry_run: bool) -> int:
    from crossfill.store import retention
    from crossfill.store.db import create_engine, session_factory
    from crossfill.store.migrate import upgrade_async

    await upgrade_async(settings.database)
    engine = create_engine(settings.database)
    try:
        sessions = session_factory(engine)
        if dry_run:
            return await retention.count_prunable(sessions, expired_before)
        return await retention.prune_expired_quotes(sessions, expired_before)
    finally:
        await engine.dispose()


@config_app.command("check")
def config_check(
    file: Annotated[
        Path | None, typer.Argument(help="Deployment file (default: configured)")
    ] = None,
) -> None:
    """Validate a deployment file; errors name the field."""
    settings = _settings()
    path = file or settings.deployment_path
    deployment = load_deployment(path, mode=settings.mode)
    console.print(f"{path}: ok ({len(deployment.chains)} chains)")


@contracts_app.command("build")
def contracts_build(force: bool = False) -> None:
    """Compile the Solidity sources with the pinned npm solc."""
    from crossfill.contracts.build import build

    console.print("contracts compiled" if build(force=force) else "contracts up to date")


def main() -> None:
    try:
        app()
    except CrossfillError as exc:
        # Escaped: messages quote user input (a header name like "[x]" would read as markup).
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        raise SystemExit(1) from None
