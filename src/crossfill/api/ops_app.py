"""The HTTP listener of a workers-only process (`crossfill run --workers-only --ops-port N`):
`/metrics`, `/healthz` and `/readyz`, as the API serves them, and nothing else.

A workers-only process keeps the series an operator watches most (RPC calls by outcome,
indexer lag, solver balances, deposit-to-fill latency, webhook deliveries) in its own memory;
on a host of its own no API process can export them. The same routes, limits and error
shape as the API's: the metrics token, the wrong-guess budget, request limits, 404 in the
error shape for any other path. No OpenAPI document: it is not the public interface.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from crossfill import __version__
from crossfill.api.draining import Drain
from crossfill.api.errors import install_error_handlers
from crossfill.api.limits import RequestLimits, RequestLimitsMiddleware
from crossfill.api.rate_limit import build_limiter
from crossfill.api.routes import health, metrics
from crossfill.runtime import Runtime


def create_ops_app(runtime: Runtime) -> FastAPI:
    """The listener's app on `runtime` (started, and closed, by the process, not by it)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await app.state.limiter.close()

    app = FastAPI(
        title="Crossfill workers",
        version=__version__,
        lifespan=lifespan,
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.state.runtime = runtime
    app.state.readiness_checks = health.ReadinessChecks()
    app.state.drain = Drain()  # never started: no API behind a balancer here
    app.state.request_counts = metrics.RequestCounts()
    app.state.limiter = build_limiter(runtime.settings.redis_url)
    app.add_middleware(
        RequestLimitsMiddleware, limits=RequestLimits.from_settings(runtime.settings)
    )
    install_error_handlers(app)
    app.include_router(health.router)
    app.include_router(metrics.router)
    return app
