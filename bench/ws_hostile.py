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

from bench.common import devnet_service
from tests.support.hostile_websocket import Outcome, attack

ACCEPTANCE_BYTES = 600 * 2**20


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
