"""The explorer's pages: its templates (Jinja2, HTML escaped) rendered into responses, the
formatting they share, and its error page, which every error under `/explorer` is answered
with instead of JSON (`api.errors.ErrorPages`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from http import HTTPStatus
from typing import Any

from fastapi import Request
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, Response

PREFIX = "/explorer"
_PAGE_HEADERS = {
    # Pages change with every status move: never kept by a cache on the way.
    "Cache-Control": "no-store",
    # Only the package's own stylesheet and script, fetches and the websocket to this origin;
    # never framed.
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; "
        "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _when(moment: datetime | None) -> str:
    """A time as people read it, in UTC to the millisecond."""
    if moment is None:
        return "—"
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d} UTC"


def _took(elapsed: timedelta | None) -> str:
    """A duration: milliseconds under a second, then seconds, then minutes and seconds."""
    if elapsed is None:
        return ""
    seconds = elapsed.total_seconds()
    if seconds < 0:  # the clocks of two sources disagree (a chain's block time, the service's)
        return "-" + _took(-elapsed)
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def _short(identifier: str) -> str:
    """A long hash or address cut to its ends, for tables (the full one is in its title)."""
    return identifier if len(identifier) <= 20 else f"{identifier[:10]}…{identifier[-8:]}"


def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("crossfill.api.explorer", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["when"] = _when
    environment.filters["took"] = _took
    environment.filters["short"] = _short
    environment.globals["prefix"] = PREFIX
    return environment


TEMPLATES = _environment()


def render(name: str, answer_status: int = 200, **context: Any) -> HTMLResponse:
    """The page `name` rendered with `context`, answered with `answer_status`."""
    html = TEMPLATES.get_template(name).render(**context)
    return HTMLResponse(html, status_code=answer_status, headers=_PAGE_HEADERS)


def _phrase(status_code: int) -> str:
    try:
        return HTTPStatus(status_code).phrase
    except ValueError:
        return "Error"


def error_page(request: Request, status_code: int, message: str) -> Response:
    """Every error under the explorer's paths, as a page: what went wrong, in words; the
    operator's view, refused for want of the token, offers its sign-in form."""
    signing_in = status_code == 401 and request.url.path.startswith(f"{PREFIX}/operator")
    return render(
        "sign_in.html" if signing_in else "error.html",
        status_code,
        status_code=status_code,
        title=_phrase(status_code),
        message=message,
    )
