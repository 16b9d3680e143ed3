"""`crossfill_http_responses_total{route, code}`: every HTTP answer the API starts, counted by
the route that served it and its status code. The app's outermost layer, so answers from the
quote front and from every layer of the stack (limits, errors, the routes) are all counted.

The route is the matched route's path template (`/requests/{request_id}`), never the path a
client sent: a flood of random paths is one `unmatched` series, not one series each. A request
the quote front served never reaches the router; its path, one of the front's few, is taken as
is. An answer never started (the client left, or the server answers the
failure itself) is not counted here.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import Counter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

UNMATCHED = "unmatched"


class ResponseCounts:
    def __init__(self, app: ASGIApp, counter: Counter, front_paths: Iterable[str]) -> None:
        """`front_paths`: the paths a layer inside serves without the router (as routes)."""
        self.app = app
        self._counter = counter
        self._front_paths = frozenset(front_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                self._counter.labels(self._route(scope), str(message["status"])).inc()
            await send(message)

        await self.app(scope, receive, counting)

    def _route(self, scope: Scope) -> str:
        route = scope.get("route")
        path = getattr(route, "path", None)
        if isinstance(path, str):
            return path
        served = scope["path"]
        return served if served in self._front_paths else UNMATCHED
