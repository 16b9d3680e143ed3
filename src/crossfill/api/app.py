"""FastAPI app factory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Protocol

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

from crossfill import __version__
from crossfill.api.auth import KeyCache
from crossfill.api.draining import CloseWhileDraining, Drain
from crossfill.api.errors import install_error_handlers
from crossfill.api.explorer import install_explorer
from crossfill.api.limits import RequestLimits, RequestLimitsMiddleware
from crossfill.api.openapi import install_openapi, responses
from crossfill.api.rate_limit import RateLimited, build_limiter
from crossfill.api.response_counts import ResponseCounts
from crossfill.api.routes import (
    admin,
    app_fees,
    authorize,
    chains,
    config,
    currencies,
    execute,
    fast_fill,
    health,
    metrics,
    oif,
    permits,
    quote,
    requests,
    signatures,
    solver_orders,
    solvers,
    status,
    transactions,
    ws,
)
from crossfill.api.routes.quote_fast import PATHS as QUOTE_PATHS
from crossfill.api.routes.quote_fast import QuoteFront
from crossfill.api.ws_limits import ConnectionsByAddress
from crossfill.app.inventory import InventoryView
from crossfill.domain.deprecation import V2Schedule, parse_reductions
from crossfill.errors import ConfigError
from crossfill.events.hub import StatusHub
from crossfill.events.tail import OutboxTail
from crossfill.loops import stop_tasks
from crossfill.runtime import Runtime


class Background(Protocol):
    """Work this process runs beside the API (the workers, built by the application layer);
    the API starts and stops it with itself and hands it clients' deposit hints."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def hint(self, chain_id: int, tx_hash: str, client: str) -> bool:
        """A client's deposit hint (`client`: whose hint budget it spends); False if nothing
        here indexes that chain, or the hint was refused."""


# Headers the official SDK and UI kit send; browsers preflight them.
CORS_ALLOWED_HEADERS = ["content-type", "x-api-key", "relay-sdk-version", "relay-kit-ui-version"]
CORS_OPTIONS: dict[str, Any] = {
    "allow_origins": ["*"],
    "allow_methods": ["GET", "POST", "OPTIONS"],
    "allow_headers": CORS_ALLOWED_HEADERS,
}


class _Api(FastAPI):
    """FastAPI with the quote paths' front (`api.routes.quote_fast.QuoteFront`) outside its
    middleware stack, every answer counted outside both (`api.response_counts`), and, outermost,
    `Connection: close` on every answer while the process drains (`api.draining`)."""

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        front = QuoteFront(
            stack,
            limits=RequestLimits.from_settings(self.state.runtime.settings),
            cors=CORSMiddleware(stack, **CORS_OPTIONS),
            exception_handlers=self.exception_handlers,
        )
        counted = ResponseCounts(front, self.state.runtime.metrics.http_responses, QUOTE_PATHS)
        return CloseWhileDraining(counted, self.state.drain)


def create_app(
    runtime: Runtime,
    *,
    follow_heads: bool = True,
    background: Background | None = None,
    wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> FastAPI:
    """Build the API over an already-built runtime; the app owns the runtime's lifetime.

    `background`: what else this process runs (the workers, in the embedded default; API-only
    replicas have none and forward hints through the database). `wall_clock` decides dated
    behaviour (the v2 listing's deprecation phases); tests move it.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime.start_wal_checkpoints()
        tasks = [asyncio.create_task(app.state.outbox_tail.run(), name="outbox-tail")]
        if follow_heads:
            await runtime.start_followers()
            view = InventoryView.of(runtime)
            tasks.append(asyncio.create_task(view.run(), name="inventory-view"))
        if background is not None:
            await background.start()
        try:
            yield
        finally:
            if background is not None:
                await background.stop()
            await stop_tasks(tasks)
            await app.state.limiter.close()
            await runtime.close()

    app = _Api(
        title="Crossfill",
        version=__version__,
        description="Cross-chain intent execution service",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    app.state.workers = background
    app.state.wall_clock = wall_clock
    app.state.key_cache = KeyCache()
    app.state.readiness_checks = health.ReadinessChecks()
    app.state.drain = Drain()
    app.state.request_counts = metrics.RequestCounts()
    app.state.hub = StatusHub()
    app.state.ws_connections = ConnectionsByAddress()
    app.state.outbox_tail = OutboxTail(
        runtime.sessions, app.state.hub, database_url=runtime.settings.database
    )
    app.state.limiter = build_limiter(runtime.settings.redis_url)
    try:
        reductions = parse_reductions(runtime.settings.v2_rate_limit_reductions)
    except ValueError as exc:
        raise ConfigError(f"CROSSFILL_V2_RATE_LIMIT_REDUCTIONS: {exc}") from exc
    app.state.v2_schedule = V2Schedule(reductions)
    app.add_middleware(CORSMiddleware, **CORS_OPTIONS)
    # Added last, so outermost: oversized requests are refused before anything reads them.
    app.add_middleware(
        RequestLimitsMiddleware, limits=RequestLimits.from_settings(runtime.settings)
    )
    install_error_handlers(app)
    install_openapi(app)
    # Routes are matched in order, one by one: the busiest first (no two paths overlap).
    for public in (
        quote,
        status,
        requests,
        signatures,
        transactions,
        chains,
        currencies,
        config,
        app_fees,
        authorize,
        execute,
        fast_fill,
        permits,
        solver_orders,
    ):
        # Documented with the dependency that answers them: a wrong key (401), a spent
        # budget of requests or of wrong keys (429).
        app.include_router(
            public.router, dependencies=[RateLimited], responses=responses(None, 401, 429)
        )
    # OIF's endpoints document their own error shape for 401 and 429 (`api.openapi`).
    app.include_router(oif.router, dependencies=[RateLimited])
    app.include_router(health.router)
    app.include_router(metrics.router)
    app.include_router(ws.router)
    app.include_router(admin.router)
    app.include_router(solvers.router)
    install_explorer(app)
    return app
