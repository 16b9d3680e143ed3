"""JSON-RPC to a chain node (EVM or SVM), through the retry policy: every call a wallet makes
is a read or the broadcast of an already-signed transaction, so each is safe to repeat."""

from __future__ import annotations

import asyncio
import itertools

import httpx
from pydantic import JsonValue, ValidationError

from crossfill_client._http import Sleep, send_with_retries
from crossfill_client._retry import RetryPolicy
from crossfill_client.errors import ChainRpcError, ResponseError
from crossfill_client.models._base import WireModel


class _RpcError(WireModel):
    code: int
    message: str
    data: JsonValue = None


class _RpcAnswer(WireModel):
    result: JsonValue = None
    error: _RpcError | None = None


class JsonRpc:
    """One node's JSON-RPC endpoint."""

    _ids = itertools.count(1)

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        retry: RetryPolicy,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.http, self.url, self.retry, self.sleep = http, url, retry, sleep

    async def call(self, method: str, *params: JsonValue) -> JsonValue:
        """The call's `result`; an error answer is a `ChainRpcError`."""
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": list(params)}
        request = self.http.build_request("POST", self.url, json=body)
        response = await send_with_retries(
            self.http, request, self.retry, idempotent=True, sleep=self.sleep
        )
        if response.status_code >= 400:
            raise ChainRpcError(method, response.status_code, response.text[:200])
        try:
            answer = _RpcAnswer.model_validate_json(response.content)
        except ValidationError as exc:
            raise ResponseError(f"{method}: not a JSON-RPC answer") from exc
        if answer.error is not None:
            raise ChainRpcError(method, answer.error.code, answer.error.message, answer.error.data)
        return answer.result


def quantity(value: JsonValue) -> int:
    """An EVM quantity (0x-hex) as an integer."""
    if not isinstance(value, str) or not value.startswith("0x"):
        raise ResponseError(f"not a quantity: {value!r}")
    return int(value, 16)
