"""Blocks mined on the devnet's chains in the background, as live chains make them: the tests'
devnet mines only when sent a transaction."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from crossfill.devnet import json_rpc
from crossfill.devnet.anvil import anvil_rpc
from crossfill.errors import DevnetError


@contextmanager
def blocks_mined(*rpc_urls: str, every: float = 1.0) -> Iterator[None]:
    """A block mined on each chain every `every` seconds meanwhile: the heads' times move on and
    transactions get deep. A block that fails or times out is let go (a slow answer on a loaded
    machine): the next still comes. A chain whose clock lags the wall clock (a shared devnet's,
    after what earlier tests did to it) gets its next block at the wall clock's time: what
    tests judge by the wall clock (a quote's expiry, an exclusivity deadline) then passes on
    chain too."""
    stop = threading.Event()

    def mine() -> None:
        while not stop.wait(every):
            for rpc_url in rpc_urls:
                try:
                    _mine(rpc_url)
                except (httpx.HTTPError, DevnetError, ValueError, KeyError) as exc:
                    print(f"block not mined on {rpc_url}: {exc!r}")  # shown if the test fails

    miner = threading.Thread(target=mine, daemon=True)
    miner.start()
    try:
        yield
    finally:
        stop.set()
        miner.join(10)


def _mine(rpc_url: str) -> None:
    latest = json_rpc.call(rpc_url, "eth_getBlockByNumber", ["latest", False])
    if not isinstance(latest, dict):
        raise DevnetError(f"no latest block on {rpc_url}: {latest!r}")
    now = int(time.time())
    lagging = int(latest["timestamp"], 16) < now - 1
    anvil_rpc(rpc_url, "evm_mine", [now] if lagging else [])
