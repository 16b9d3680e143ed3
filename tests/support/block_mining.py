"""Blocks mined on the devnet's chains in the background, as live chains make them: the tests'
devnet mines only when sent a transaction."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from crossfill.devnet.anvil import anvil_rpc
from crossfill.errors import DevnetError


@contextmanager
def blocks_mined(*rpc_urls: str, every: float = 1.0) -> Iterator[None]:
    """A block mined on each chain every `every` seconds meanwhile: the heads' times move on and
    transactions get deep. A block that fails or times out is let go (a slow answer on a loaded
    machine): the next still comes."""
    stop = threading.Event()

    def mine() -> None:
        while not stop.wait(every):
            for rpc_url in rpc_urls:
                try:
                    anvil_rpc(rpc_url, "evm_mine", [])
                except (httpx.HTTPError, DevnetError):
                    continue

    miner = threading.Thread(target=mine, daemon=True)
    miner.start()
    try:
        yield
    finally:
        stop.set()
        miner.join(10)
