"""A hostile client of GET /ws: the worst one address can do for a while, and what it costs the
service in memory (acceptance: under 600 MB for 30 s).

Attackers, all from this one address, each reconnecting as soon as its socket is closed:
- held: subscribes to a fresh requestId at the message rate limit and never reads a reply;
- flood: fresh subscriptions as fast as the socket takes them;
- long ids: 2 MB subscription ids (frames far over the size limit);
- binary: small binary frames (the size limit would refuse large ones first);
- deep: JSON arrays nested 4,000 deep (under the size limit).
There are more attackers than the per-address connection cap: the extra ones are refused and
retry at once. The service's RSS is read from /proc every 100 ms.
Run: `.venv/bin/python -m bench.ws_hostile [--seconds 30] [--attackers 40]` (starts a devnet), or
`... --base-url http://127.0.0.1:8000 --pid <service pid>` against a running service.
"""

from __future__ import annotations

import argparse
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

from bench.common import devnet_service

EVENT = "request.status.updated"
ACCEPTANCE_BYTES = 600 * 2**20
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


def _print(outcome: Outcome) -> None:
    mib = 2**20
    tally = outcome.tally
    verdict = "within" if outcome.peak_rss < ACCEPTANCE_BYTES else "OVER"
    print(
        f"service RSS: start {outcome.start_rss / mib:.0f} MB, peak {outcome.peak_rss / mib:.0f} MB"
        f" ({verdict} {ACCEPTANCE_BYTES / mib:.0f} MB)"
    )
    print(
        f"messages sent: {tally.messages_sent}; connections: {tally.connections} opened, "
        f"{tally.refused} refused (per-address cap), {tally.failed} failed handshakes"
    )
    print("close codes: " + ", ".join(f"{code} x{n}" for code, n in sorted(tally.closes.items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--attackers", type=int, default=40)
    parser.add_argument("--base-url", help="a running service (then --pid names its process)")
    parser.add_argument("--pid", type=int, help="the running service's process id")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.base_url is None:
            service = stack.enter_context(devnet_service())
            base_url, pid = service.base_url, service.pid
        elif args.pid is None:
            raise SystemExit("--base-url needs --pid: the process whose RSS is sampled")
        else:
            base_url, pid = args.base_url, args.pid
        ws_url = base_url.replace("http://", "ws://", 1) + "/ws"
        outcome = asyncio.run(attack(ws_url, pid, seconds=args.seconds, attackers=args.attackers))
    _print(outcome)
    if outcome.peak_rss >= ACCEPTANCE_BYTES:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
