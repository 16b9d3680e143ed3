"""JSON-RPC over HTTP for AsyncWeb3, on an aiohttp session owned by one chain client.

web3's own AsyncHTTPProvider serialises every request through a process-wide threading.Lock
taken in a thread pool; a request cancelled while waiting for that lock leaves it held for
good, after which every web3 call in the process hangs (seen when followers are cancelled at
shutdown). This provider has no shared state: one pooled session per endpoint, opened on first
use inside the running loop. aiohttp rather than httpx: a JSON-RPC round trip costs about a
quarter of the CPU (0.34 ms against 1.5 ms measured against anvil), and every quote, head poll
and fill makes several.

What comes back is checked before anyone reads it: a body that is not JSON (a gateway's HTML
page, answered 200) is a transport failure like a 502, not an exception nobody expects; and a
batch's answers are matched to its calls by id, since JSON-RPC lets a server answer a batch in
any order (a load balancer spreading one over several nodes does), and a balance read as an
allowance would drop an approval a deposit needs. A batch the endpoint refuses as a whole (one
error answered for the array, or an HTTP status saying it takes no such request) is
`BatchRefused`: some providers take no batches, or none as large.
"""

from __future__ import annotations

import json
import sys
from typing import Any, cast

import aiohttp
from web3.providers.async_base import AsyncJSONBaseProvider
from web3.types import RPCEndpoint, RPCResponse

from crossfill.errors import BatchRefused


class MalformedReply(Exception):
    """The endpoint answered, but not with JSON-RPC."""


TRANSPORT_ERRORS = (OSError, TimeoutError, aiohttp.ClientError, MalformedReply)
# What a provider taking no batches (or none this large) answers a batch with: bad request,
# method not allowed, payload too large, not implemented. Not 429 or a gateway's 5xx: those
# are the endpoint's trouble, retried as such.
_BATCH_REFUSING_STATUSES = frozenset({400, 405, 413, 501})


class JsonRpcProvider(AsyncJSONBaseProvider):
    def __init__(self, endpoint_uri: str, *, timeout_seconds: float) -> None:
        super().__init__()
        self.endpoint_uri = endpoint_uri
        self._timeout = aiohttp.ClientTimeout(total=timeout_seconds)
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=self._timeout,
                headers={"Content-Type": "application/json"},
                connector=aiohttp.TCPConnector(limit=32),
            )
        return self._session

    async def _post(self, body: bytes) -> bytes:
        async with self._open().post(self.endpoint_uri, data=body) as reply:
            reply.raise_for_status()
            return await reply.read()

    async def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        decoded = _decoded(await self._post(self.encode_rpc_request(method, params)))
        if not isinstance(decoded, dict):
            raise MalformedReply(f"{method} answered a {type(decoded).__name__}")
        return cast(RPCResponse, decoded)

    async def make_batch_request(
        self, batch_requests: list[tuple[RPCEndpoint, Any]]
    ) -> list[RPCResponse] | RPCResponse:
        """Each call's answer in the calls' order; a call the server left unanswered gets an
        error answer. BatchRefused when the server refuses the batch as a whole."""
        requests = [self.form_request(method, params) for method, params in batch_requests]
        try:
            body = await self._post(self.encode_batch_request_dicts(requests))
        except aiohttp.ClientResponseError as exc:
            if exc.status in _BATCH_REFUSING_STATUSES:
                raise BatchRefused(f"a batch of {len(requests)} answered {exc.status}") from exc
            raise
        decoded = _decoded(body)
        if isinstance(decoded, dict) and "error" in decoded:
            raise BatchRefused(f"a batch of {len(requests)} answered {_error_text(decoded)}")
        if not isinstance(decoded, list):
            raise MalformedReply(f"a batch answered a {type(decoded).__name__}")
        # Ids as text: a proxy may echo them as strings.
        by_id = {
            str(answer["id"]): answer
            for answer in decoded
            if isinstance(answer, dict) and answer.get("id") is not None
        }
        if (
            not by_id
            and len(decoded) == len(requests)
            and all(isinstance(answer, dict) for answer in decoded)
        ):
            return cast(list[RPCResponse], decoded)  # no ids at all: in order, as web3 reads it
        answers = []
        for request in requests:
            answer = by_id.get(str(request["id"])) or {**_UNANSWERED, "id": request["id"]}
            answers.append(cast(RPCResponse, answer))
        return answers

    async def disconnect(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


_UNANSWERED: dict[str, Any] = {
    "jsonrpc": "2.0",
    "error": {"code": -32603, "message": "no answer to this call in the batch's answer"},
}


def _error_text(answer: dict[str, Any]) -> str:
    """A refusal's own words, cut short (a provider's message is text of its choosing)."""
    error = answer["error"]
    message = error.get("message") if isinstance(error, dict) else error
    return str(message)[:200]


# How deep the decoder may go in a node's answer: geth's call frames of a transaction at the
# EVM's deepest (1,024 nested calls, two JSON levels each), with room for the caller's stack.
_DEEPEST_ANSWER = 4_000


def _decoded(body: bytes) -> Any:
    """The body as JSON, read by the standard decoder as web3 reads it (integers wider than 64
    bits stay exact).

    The decoder recurses once per nesting level and stops at the interpreter's recursion limit
    (1,000), which the call frames of one cheap transaction of nested calls pass: such an
    answer is read again with the limit raised to `_DEEPEST_ANSWER` for the while. Anything
    deeper is no node's honest answer."""
    try:
        return json.loads(body)
    except ValueError:  # not JSON, or not text
        raise MalformedReply(f"answered {len(body)} bytes that are not JSON") from None
    except RecursionError:
        pass
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _DEEPEST_ANSWER))
    try:
        return json.loads(body)
    except RecursionError:
        raise MalformedReply(f"answered JSON nested deeper than {_DEEPEST_ANSWER}") from None
    finally:
        sys.setrecursionlimit(limit)
