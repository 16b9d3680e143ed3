"""The explorer: pages for people, served by the service itself under `/explorer`.

Server-rendered HTML (Jinja2 templates in `templates/`), one stylesheet and one small script
(`static/`, served from the package: nothing is fetched from elsewhere). The pages read what
the API reads: the v3 listing's filters and records (`app.request_records`), the `/chains`
records and `/readyz` checks, and `/ws` for live updates. See docs/explorer.md.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from crossfill.api.explorer.pages import PREFIX, error_page
from crossfill.api.explorer.routes import router
from crossfill.api.rate_limit import RateLimited


def install_explorer(app: FastAPI) -> None:
    """Serve the explorer's pages (rate limited as the public API is), its static files, and
    its error pages for every error under its paths."""
    app.include_router(router, dependencies=[RateLimited])
    app.mount(
        f"{PREFIX}/static",
        StaticFiles(packages=[("crossfill.api.explorer", "static")]),
        name="explorer-static",
    )
    app.state.error_pages = {PREFIX: error_page}
