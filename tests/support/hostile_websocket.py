"""A hostile client of GET /ws: the worst one address can do for a while, and what it costs the
service's process in memory. The e2e suite runs it against the service in the test's process;
`python -m bench.ws_hostile` against a devnet.

Attackers, all from this one address, each reconnecting as soon as its socket is closed:
- held: subscribes to a fresh requestId at the message rate limit and never reads a reply;
- flood: fresh subscriptions as fast as the socket takes them;
- long ids: subscription ids of `long_id_bytes` (frames far over the size limit);
- binary: small binary frames (the size limit would refuse large ones first);
- deep: JSON arrays nested 4,000 deep (under the size limit).
There are more attackers than the per-address connection cap: the extra ones are refused and
retry at once. The process's RSS is read from /proc every 100 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

EVENT = "request.status.updated"
HELD_PER_SECOND = 20  # the default message rate limit: each message is acted on
_fresh_ids = itertools.count()


def rss_bytes(pid: int) -> int:
    """Resident set size of process `pid` (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def _subscribe(request_id: str) -> str:
    return json.dumps({"type": "subscribe", "event": EVENT, "filters": {"id": request_id}})


def _fresh_subscription() -> str:
    return _subscribe(f"0x{next(_fresh_ids):064x}")


@dataclass(frozen=True)
class Behaviour:
    name: str
    message: Callable[[], str | bytes]
    per_second: float | None  # None: as fast as the socket takes them
    reads: bool


def behaviours(long_id_bytes: int) -> tuple[Behaviour, ...]:
    """The attackers' parts, in turn; subscription ids of `long_id_bytes` for "long ids"."""
    padding = "f" * long_id_bytes
    return (
        Behaviour("held", _fresh_subscription, HELD_PER_SECOND, reads=False),
        Behaviour("flood", _fresh_subscription, None, reads=True),
        Behaviour("long ids", lambda: _subscribe(f"0x{next(_fresh_ids):x}{padding}"), None, True),
        Behaviour("binary", lambda: b"\x00" * 64, None, reads=True),
        Behaviour("deep", lambda: "[" * 4000, None, reads=True),
    )


@dataclass
class Tally:
    messages_sent: int = 0
    connections: int = 0
    refused: int = 0  # closed for the per-address connection cap
    failed: int = 0  # handshakes that did not complete
    closes: Counter[int] = field(default_factory=Counter)


async def _drain(socket: ClientConnection) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for _ in socket:
            pass


async def _misbehave(
    socket: ClientConnection, behaviour: Behaviour, deadline: float, tally: Tally
) -> None:
    reader = asyncio.create_task(_drain(socket)) if behaviour.reads else None
    try:
        while time.monotonic() < deadline:
            await socket.send(behaviour.message())
            tally.messages_sent += 1
            # Yield even when not pacing: the socket's close must get a chance to arrive.
            await asyncio.sleep(0 if behaviour.per_second is None else 1 / behaviour.per_second)
    except ConnectionClosed:
        pass
    finally:
        if reader is not None:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)


async def _attacker(ws_url: str, behaviour: Behaviour, deadline: float, tally: Tally) -> None:
    while time.monotonic() < deadline:
        try:
            async with connect(ws_url, open_timeout=5, close_timeout=1) as socket:
                tally.connections += 1
                await _misbehave(socket, behaviour, deadline, tally)
        except (OSError, TimeoutError, InvalidHandshake):
            tally.failed += 1
            await asyncio.sleep(0.05)
            continue
        code = socket.close_code
        if code is not None:
            tally.closes[code] += 1
        if "too many connections" in (socket.close_reason or ""):
            tally.refused += 1


async def _peak_rss(pid: int, deadline: float) -> int:
    peak = rss_bytes(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        peak = max(peak, rss_bytes(pid))
    return peak


@dataclass(frozen=True)
class Outcome:
    start_rss: int
    peak_rss: int
    tally: Tally


async def attack(
    ws_url: str, pid: int, *, seconds: float, attackers: int, long_id_bytes: int = 2_000_000
) -> Outcome:
    """`attackers` hostile clients on `ws_url` for `seconds`; the RSS of process `pid` before
    and at its peak meanwhile."""
    start_rss = rss_bytes(pid)
    deadline = time.monotonic() + seconds
    tally = Tally()
    parts = itertools.cycle(behaviours(long_id_bytes))
    peak = asyncio.create_task(_peak_rss(pid, deadline + 1))
    await asyncio.gather(
        *(_attacker(ws_url, next(parts), deadline, tally) for _ in range(attackers))
    )
    return Outcome(start_rss, await peak, tally)
