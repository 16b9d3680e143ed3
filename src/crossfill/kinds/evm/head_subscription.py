"""New heads pushed by a node: `eth_subscribe("newHeads")` over its websocket (web3's
AsyncWeb3 + WebSocketProvider). A lost or refused connection leaves here as ChainUnreachable;
the follower then polls and subscribes again (`kinds.evm.follower`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from web3 import AsyncWeb3, WebSocketProvider
from web3.exceptions import Web3Exception
from websockets.exceptions import WebSocketException

from crossfill.errors import ChainError, ChainUnreachable
from crossfill.kinds.evm.client import BlockHead, shown_endpoint
from crossfill.types import ChainId

# Our own backoff (the follower's) paces reconnections; web3's would sleep up to 18 s inside.
_CONNECT_ATTEMPTS = 1
_FAILURES = (WebSocketException, Web3Exception, OSError, TimeoutError)


def _hex(value: Any) -> str:
    return value if isinstance(value, str) else "0x" + bytes(value).hex()


def subscribed_head(header: Mapping[str, Any]) -> BlockHead:
    """A `newHeads` header as web3 formats it (ints, byte strings)."""
    return BlockHead(
        number=int(header["number"]),
        timestamp=int(header["timestamp"]),
        hash=_hex(header["hash"]),
        base_fee_per_gas=int(header.get("baseFeePerGas") or 0),
        parent_hash=_hex(header["parentHash"]),
    )


class WebSocketHeads:
    """One chain's head subscription; each `new_heads()` is a fresh connection."""

    def __init__(self, chain_id: ChainId, url: str, *, timeout_seconds: float) -> None:
        self.chain_id = chain_id
        self.url = url
        self.endpoint = shown_endpoint(url)
        self.timeout_seconds = timeout_seconds

    async def new_heads(self) -> AsyncIterator[BlockHead]:
        """Every head the node announces, from now on, until the connection is lost."""
        provider = WebSocketProvider(
            self.url,
            max_connection_retries=_CONNECT_ATTEMPTS,
            request_timeout=self.timeout_seconds,
        )
        try:
            async with AsyncWeb3(provider) as web3:
                await web3.eth.subscribe("newHeads")
                async for message in web3.socket.process_subscriptions():
                    yield self._head_of(message)
        except _FAILURES as exc:
            raise ChainUnreachable(
                f"chain {self.chain_id}: head subscription at {self.endpoint} lost: "
                f"{type(exc).__name__}"
            ) from exc
        raise ChainUnreachable(f"chain {self.chain_id}: {self.endpoint} ended the subscription")

    def _head_of(self, message: Mapping[str, Any]) -> BlockHead:
        try:
            return subscribed_head(message["result"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ChainError(
                f"chain {self.chain_id}: {self.endpoint} pushed a malformed head: {exc!r}"
            ) from exc
