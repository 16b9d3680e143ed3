"""A reference external solver for Crossfill (docs/solvers.md), using only the service's public
interface: the Python client (`crossfill_client`) to read `/chains`, the admin API (with the
operator's token) to register, each chain's JSON-RPC to post its bond, and an HTTP endpoint of
its own where it answers bid requests with EIP-712 bids signed by its key.

It prices same-currency routes only: it pays the input less `--fee-bps`, and declines the rest.
It fills the orders it won (`fills.py`): it asks the service for them and sends each one's
`Filler.fillExclusive` on its destination; with `--fade` it bids but never fills.

    python examples/solver/solver.py --service http://127.0.0.1:8000 --admin-token TOKEN \\
        --key 0x... --name alpha --route 900001:900002:0x0000000000000000000000000000000000000000 \\
        --bond-ether 5 --max-size-usd 100000 --fee-bps 3

It prints `ready <bid url>` once its bond is posted and it is registered, then serves until
stopped (Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from bids import BidRequest, request_signer, signed_bid
from eth_account import Account
from eth_account.signers.local import LocalAccount
from fills import Filling
from web3 import Web3
from web3.middleware import SignAndSendRawMiddlewareBuilder
from web3.types import Wei

from crossfill_client import Client

NATIVE = "0x0000000000000000000000000000000000000000"
# What the solver calls of `SolverBond` (docs/solvers.md).
BOND_ABI = [
    {
        "type": "function",
        "name": "deposit",
        "stateMutability": "payable",
        "inputs": [
            {"name": "currency", "type": "address"},
            {"name": "amount", "type": "uint256"},
        ],
        "outputs": [],
    },
    {
        "type": "function",
        "name": "bondOf",
        "stateMutability": "view",
        "inputs": [{"name": "solver", "type": "address"}, {"name": "currency", "type": "address"}],
        "outputs": [{"name": "", "type": "uint256"}],
    },
]
# A bid stays firm this long past the quote's expiry.
BID_VALID_FOR_SECONDS = 60


class Pricing:
    def __init__(self, account: LocalAccount, fee_bps: int, operators: set[str]) -> None:
        self.account = account
        self.fee_bps = fee_bps
        # The operator's solver addresses (`/chains` solverAddresses): who may ask for bids.
        self.operators = operators

    def answer(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The signed bid for a request, or None to decline."""
        request = BidRequest.of(body)
        if request_signer(request, str(body["signature"])).lower() not in self.operators:
            return None
        if request.currency_in != request.currency_out:
            return None
        output = request.amount_in * (10_000 - self.fee_bps) // 10_000
        return signed_bid(self.account, request, output, valid_for=BID_VALID_FOR_SECONDS)


def serve(pricing: Pricing, host: str, port: int) -> ThreadingHTTPServer:
    class BidHandler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            try:
                bid = pricing.answer(json.loads(self.rfile.read(length)))
            except (KeyError, TypeError, ValueError):
                bid = None
            payload = json.dumps(bid if bid is not None else {"decline": True}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    class BidServer(ThreadingHTTPServer):
        # Quotes come in bursts: a backlog of 5 would drop connections.
        request_queue_size = 128
        daemon_threads = True

    server = BidServer((host, port), BidHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def post_bond(rpc_url: str, bond_contract: str, account: LocalAccount, wei: int) -> int:
    """Bond `wei` of the chain's gas currency; the bond now held."""
    web3 = Web3(Web3.HTTPProvider(rpc_url))
    web3.middleware_onion.inject(SignAndSendRawMiddlewareBuilder.build(account), layer=0)
    web3.eth.default_account = account.address
    bond = web3.eth.contract(address=Web3.to_checksum_address(bond_contract), abi=BOND_ABI)
    if wei:
        tx = bond.functions.deposit(NATIVE, wei).transact({"value": Wei(wei)})
        if web3.eth.wait_for_transaction_receipt(tx, timeout=60)["status"] != 1:
            raise SystemExit("the bond deposit reverted")
    held: int = bond.functions.bondOf(account.address, NATIVE).call()
    return held


def register(args: argparse.Namespace, account: LocalAccount, bid_url: str) -> dict[str, Any]:
    routes = []
    for text in args.route:
        origin, destination, currencies = text.split(":")
        routes.append(
            {
                "originChainId": int(origin),
                "destinationChainId": int(destination),
                "currencies": currencies.split(","),
            }
        )
    body = {
        "addresses": {"evm": account.address},
        "bidUrl": bid_url,
        "routes": routes,
        "maxSizeUsd": args.max_size_usd,
    }
    headers = {"Authorization": f"Bearer {args.admin_token}"}
    with httpx.Client(base_url=args.service, headers=headers, timeout=30) as admin:
        answer = admin.post("/admin/solvers", json={"name": args.name, **body})
        if answer.status_code == 409:  # registered before: bring it up to date
            answer = admin.patch(f"/admin/solvers/{args.name}", json=body)
        answer.raise_for_status()
        registered: dict[str, Any] = answer.json()
        return registered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--service", required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--key", required=True, help="the solver's private key (hex)")
    parser.add_argument("--name", required=True)
    parser.add_argument("--route", action="append", required=True)
    parser.add_argument("--bond-ether", type=float, default=0.0)
    parser.add_argument("--max-size-usd", default="100000")
    parser.add_argument("--fee-bps", type=int, default=5)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fade", action="store_true", help="bid, but never fill what it wins")
    args = parser.parse_args()
    account: LocalAccount = Account.from_key(args.key)
    with Client(args.service) as client:
        chains = {chain.id: chain for chain in client.chains()}
    operators = {a.lower() for chain in chains.values() for a in chain.solver_addresses}
    for destination in {int(text.split(":")[1]) for text in args.route}:
        chain = chains[destination]
        bond_contract = str((chain.contracts or {}).get("solverBond") or "")
        if not bond_contract:
            raise SystemExit(f"chain {destination} has no SolverBond")
        held = post_bond(chain.http_rpc_url, bond_contract, account, int(args.bond_ether * 10**18))
        print(f"bond on {destination}: {held} wei", flush=True)
    server = serve(Pricing(account, args.fee_bps, operators), args.host, args.port)
    bid_url = f"http://{args.host}:{server.server_address[1]}/bid"
    registered = register(args, account, bid_url)
    print(f"registered {registered['name']} {account.address}", flush=True)
    rpc_urls = {chain.id: chain.http_rpc_url for chain in chains.values()}
    filling = Filling(args.service, account, rpc_urls, fade=args.fade)
    filling.start()
    print(f"ready {bid_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        filling.stop()
        server.shutdown()
        sys.exit(0)


if __name__ == "__main__":
    main()
