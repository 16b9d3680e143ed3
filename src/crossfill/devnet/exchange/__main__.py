"""`python -m crossfill.devnet.exchange --port P --state FILE`: run the devnet exchange."""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn

from crossfill.devnet.exchange.actions import Exchange
from crossfill.devnet.exchange.ledger import ExchangeLedger
from crossfill.devnet.exchange.server import build_app


def main() -> None:
    parser = argparse.ArgumentParser(description="Crossfill's devnet perps exchange")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--state", type=Path, required=True, help="its SQLite file")
    parser.add_argument("--chain", choices=("Mainnet", "Testnet"), default="Testnet")
    args = parser.parse_args()
    exchange = Exchange(ExchangeLedger(args.state), args.chain)
    uvicorn.run(
        build_app(exchange), host=args.host, port=args.port, lifespan="off", log_level="warning"
    )


if __name__ == "__main__":
    main()
