"""A quote's own computation, in process, no I/O: CPU per quote by route, beside the cost of
only parsing the body and encoding the same answer.

`bench.quote --wrk` measures the service as clients meet it, but on a shared VM its figures
drift by a third within minutes. This isolates what a change to the quote's code does: the
body parsed and validated (`QuoteBody`), the quote planned (`plan_quote`), its wire answer and
rows built, its fill planned, the answer encoded, exactly as `app.quotes` does between the
user's position read and the commit, against the two-chain snapshot the unit tests plan on
(`tests/support/quote_fixtures.py`: a USDC/WETH pool on each chain). The baseline is the least a
service can do for the same request: parse the body and encode the very answer. Each figure
is the best of `--rounds` rounds of process CPU time, the machine's stalls being what the
other rounds show.

Run: `.venv/bin/python -m bench.quote_cpu [--quotes 3000] [--rounds 5]`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from crossfill.api.schemas.quote import QuoteBody
from crossfill.app.entropy import new_entropy
from crossfill.app.fills import FillTerms, plan_fill
from crossfill.app.quote_rows import quote_rows
from crossfill.config import Deployment
from crossfill.quoting.engine import ChainView, plan_quote
from crossfill.quoting.response import quote_wire
from crossfill.store import requests
from crossfill.store.db import EncodedJson
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support import quote_fixtures as fixtures

ORIGIN, DESTINATION = fixtures.CHAINS


def route_bodies() -> dict[str, dict[str, Any]]:
    common = {"user": fixtures.USER, "tradeType": "EXACT_INPUT"}
    bridge = {**common, "originChainId": ORIGIN, "destinationChainId": DESTINATION}
    return {
        "native bridge": {
            **bridge,
            "originCurrency": NATIVE_EVM_ADDRESS,
            "destinationCurrency": NATIVE_EVM_ADDRESS,
            "amount": str(10**17),
        },
        "USDC bridge": {
            **bridge,
            "originCurrency": fixtures.USDC,
            "destinationCurrency": fixtures.USDC,
            "amount": "25000000",
        },
        "cross-chain swap": {
            **bridge,
            "originCurrency": NATIVE_EVM_ADDRESS,
            "destinationCurrency": fixtures.USDC,
            "amount": str(10**17),
        },
        "same-chain swap": {
            **common,
            "originChainId": ORIGIN,
            "destinationChainId": ORIGIN,
            "originCurrency": fixtures.USDC,
            "destinationCurrency": NATIVE_EVM_ADDRESS,
            "amount": "25000000",
        },
    }


def quote_once(
    raw: bytes, config: Deployment, views: dict[int, ChainView]
) -> tuple[bytes, requests.QuoteRows]:
    """One quote of `raw` against the snapshot: its answer and the rows stored for it, made as
    `app.quotes` makes them (`bench.quote_rows` stores them)."""
    body = QuoteBody.model_validate(orjson.loads(raw)).to_request()
    planned = plan_quote(
        body, chains=views, deployment=config, now=datetime.now(UTC), entropy=new_entropy()
    )
    wire = quote_wire(planned, allowance=None, user_balance=10**20, order_signature=None)
    rows = quote_rows(planned, wire, referrer=None, api_key_id=None)
    encoded = orjson.dumps(wire)
    rows.request["quote"] = EncodedJson(encoded.decode())
    fill_plan = plan_fill(FillTerms.of_quote(planned), planned.destination)
    rows.request["fill_plan"] = fill_plan.to_json()
    return encoded, rows


def _quoting(raw: bytes) -> Callable[[], bytes]:
    config = fixtures.deployment()
    views = fixtures.views(config)
    return lambda: quote_once(raw, config, views)[0]


def _answering(raw: bytes, answer: bytes) -> Callable[[], bytes]:
    wire = orjson.loads(answer)

    def serve() -> bytes:
        orjson.loads(raw)
        return orjson.dumps(wire)

    return serve


def _best_seconds(work: Callable[[], bytes], quotes: int, rounds: int) -> float:
    for _ in range(quotes // 10):  # warm: first-use caches, the allocator
        work()
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(quotes):
            work()
        best = min(best, (time.process_time() - started) / quotes)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quotes", type=int, default=3000, help="quotes per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"quote computation in process  quotes={args.quotes} rounds={args.rounds} (best round)")
    for route, body in route_bodies().items():
        raw = orjson.dumps(body)
        quote = _quoting(raw)
        quoted = _best_seconds(quote, args.quotes, args.rounds)
        floor = _best_seconds(_answering(raw, quote()), args.quotes, args.rounds)
        print(
            f"{route:17s} quote {quoted * 1e6:7.1f} us  parse+encode only {floor * 1e6:5.1f} us  "
            f"x{quoted / floor:.0f}"
        )


if __name__ == "__main__":
    main()
