"""`python -m crossfill.devnet.svm --port P`: run a devnet SVM node until SIGTERM."""

from __future__ import annotations

import argparse
import asyncio

import uvicorn

from crossfill.devnet.svm.ledger import BLOCKHASH_VALID_SLOTS, Ledger
from crossfill.devnet.svm.server import SvmNode, build_app
from crossfill.devnet.svm.subscriptions import SubscriptionHub


async def serve(args: argparse.Namespace) -> None:
    ledger = Ledger(
        finality_slots=args.finality_slots, blockhash_valid_slots=args.blockhash_valid_slots
    )
    node = SvmNode(ledger, SubscriptionHub())
    app = build_app(node)
    servers = [
        uvicorn.Server(
            uvicorn.Config(app, host=args.host, port=bound, lifespan="off", log_level="warning")
        )
        for bound in (args.port, args.ws_port or args.port + 1)
    ]
    slots = asyncio.create_task(node.run_slots(args.slot_ms / 1000))
    try:
        await asyncio.gather(*(server.serve() for server in servers))
    finally:
        slots.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description="Crossfill's devnet SVM node")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ws-port", type=int, help="default: --port + 1")
    parser.add_argument("--slot-ms", type=int, default=400)
    parser.add_argument("--finality-slots", type=int, default=2)
    parser.add_argument("--blockhash-valid-slots", type=int, default=BLOCKHASH_VALID_SLOTS)
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
