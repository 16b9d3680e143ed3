"""Who may see the operator's view: whoever holds the admin API's operator token
(`CROSSFILL_ADMIN_TOKEN`), presented as the admin API takes it (`Authorization: Bearer`) or
once through the sign-in form, which leaves a session cookie.

The cookie holds an HMAC of the token, never the token itself, so it opens this view only
(not the admin API) and stops working when the token changes. It is HttpOnly, SameSite=Strict
and scoped to the explorer's paths. Wrong tokens, from the form or a cookie, spend the client
address's wrong guesses as the admin API's do (`api.auth.GuessGuard`).
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qs

from fastapi import Request
from starlette.responses import Response

from crossfill.api.auth import GuessGuard, require_bearer
from crossfill.api.client_address import client_address
from crossfill.errors import Forbidden, Unauthorized
from crossfill.runtime import Runtime

COOKIE = "crossfill_operator"
COOKIE_PATH = "/explorer"
SESSION_SECONDS = 12 * 3600
_SESSION_LABEL = b"crossfill explorer operator session"
NEEDS_TOKEN = "The operator view needs the operator token (CROSSFILL_ADMIN_TOKEN)"


def _session_value(token: str) -> str:
    return hmac.new(token.encode(), _SESSION_LABEL, hashlib.sha256).hexdigest()


def _operator_token(runtime: Runtime) -> str:
    token = runtime.settings.admin_token
    if not token:
        raise Forbidden("The operator view is off: set CROSSFILL_ADMIN_TOKEN to use it")
    return token


def _guard(request: Request, runtime: Runtime) -> GuessGuard:
    address = client_address(request, runtime.settings.trusted_proxies)
    return GuessGuard.of(request, runtime, address)


async def require_operator(request: Request, runtime: Runtime) -> None:
    """Forbidden when no operator token is set; Unauthorized unless the request carries it
    (a session cookie or the admin API's bearer header)."""
    token = _operator_token(runtime)
    presented = request.cookies.get(COOKIE)
    if presented is None:
        await require_bearer(request, runtime, token, NEEDS_TOKEN)
        return
    guard = _guard(request, runtime)
    await guard.refuse_if_spent()
    if not hmac.compare_digest(presented.encode(), _session_value(token).encode()):
        await guard.count_wrong()
        raise Unauthorized("The operator session has ended: sign in again")


async def sign_in(request: Request, runtime: Runtime, response: Response) -> None:
    """Check the form's token (`token`, URL-encoded) and set the session cookie on
    `response`; Unauthorized when it is wrong."""
    token = _operator_token(runtime)
    guard = _guard(request, runtime)
    await guard.refuse_if_spent()
    form = parse_qs((await request.body()).decode(errors="replace"), max_num_fields=4)
    presented = (form.get("token") or [""])[0]
    if not hmac.compare_digest(presented.encode(), token.encode()):
        if presented:
            await guard.count_wrong()
        raise Unauthorized("That is not the operator token")
    response.set_cookie(
        COOKIE,
        _session_value(token),
        max_age=SESSION_SECONDS,
        path=COOKIE_PATH,
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )


def sign_out(response: Response) -> None:
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")
