"""FastAPI app factory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from crossfill import __version__
from crossfill.api.errors import install_error_handlers
from crossfill.api.routes import chains, health, quote, status, transactions
from crossfill.runtime import Runtime
from crossfill.workers.runner import Workers

# Headers the official SDK and UI kit send; browsers preflight them.
CORS_ALLOWED_HEADERS = ["content-type", "x-api-key", "relay-sdk-version", "relay-kit-ui-version"]


def create_app(
    runtime: Runtime, *, follow_heads: bool = True, run_workers: bool = False
) -> FastAPI:
    """Build the API over an already-built runtime; the app owns the runtime's lifetime.

    With `run_workers`, this process also runs the indexers and solvers (the embedded default);
    API-only replicas leave them to worker processes.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if follow_heads:
            runtime.start_followers()
        workers = Workers.build(runtime) if run_workers else None
        app.state.workers = workers
        if workers is not None:
            await workers.recover(runtime)
            workers.start()
        try:
            yield
        finally:
            if workers is not None:
                await workers.stop()
            await runtime.close()

    app = FastAPI(
        title="Crossfill",
        version=__version__,
        description="Cross-chain intent execution service",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    app.add_middleware(
        CORSMiddleware,
        allow_origins=["*"],
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=CORS_ALLOWED_HEADERS,
    )
    install_error_handlers(app)
    app.include_router(health.router)
    app.include_router(chains.router)
    app.include_router(quote.router)
    app.include_router(status.router)
    app.include_router(transactions.router)
    return app
