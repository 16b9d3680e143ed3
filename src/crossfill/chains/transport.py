"""JSON-RPC over HTTP for AsyncWeb3, on an httpx client owned by one chain client.

web3's own AsyncHTTPProvider serialises every request through a process-wide threading.Lock
taken in a thread pool; a request cancelled while waiting for that lock leaves it held for
good, after which every web3 call in the process hangs (seen when followers are cancelled at
shutdown). This provider has no shared state: one pooled httpx client per endpoint.
"""

from __future__ import annotations

from typing import Any

import httpx
from web3.providers.async_base import AsyncJSONBaseProvider
from web3.types import RPCEndpoint, RPCResponse


class HttpxProvider(AsyncJSONBaseProvider):
    def __init__(self, endpoint_uri: str, *, timeout_seconds: float) -> None:
        super().__init__()
        self.endpoint_uri = endpoint_uri
        self._client = httpx.AsyncClient(
            timeout=timeout_seconds,
            headers={"Content-Type": "application/json"},
            limits=httpx.Limits(max_connections=32, max_keepalive_connections=16),
        )

    async def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        reply = await self._client.post(
            self.endpoint_uri, content=self.encode_rpc_request(method, params)
        )
        reply.raise_for_status()
        return self.decode_rpc_response(reply.content)

    async def make_batch_request(
        self, batch_requests: list[tuple[RPCEndpoint, Any]]
    ) -> list[RPCResponse] | RPCResponse:
        reply = await self._client.post(
            self.endpoint_uri, content=self.encode_batch_rpc_request(batch_requests)
        )
        reply.raise_for_status()
        decoded: list[RPCResponse] | RPCResponse = self.decode_rpc_response(reply.content)
        return decoded

    async def disconnect(self) -> None:
        await self._client.aclose()
