"""JSON-RPC calls the devnet makes to its own nodes (anvil chains, the SVM node)."""

from __future__ import annotations

import httpx

from crossfill.errors import DevnetError


def call(rpc_url: str, method: str, params: list[object]) -> object:
    """The result of `method` at `rpc_url`; an RPC error raises DevnetError."""
    reply = httpx.post(
        rpc_url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=10
    ).json()
    if "error" in reply:
        raise DevnetError(f"{method} failed on {rpc_url}: {reply['error'].get('message')}")
    return reply.get("result")
