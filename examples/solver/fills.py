"""How the reference solver fills what it won: it asks the service for its paid orders
(`GET /solvers/{address}/orders`, through the Python client) and sends each one's
`Filler.fillExclusive` on its destination with its own key, as docs/solvers.md describes."""

from __future__ import annotations

import threading
import time
from typing import Any

from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.middleware import SignAndSendRawMiddlewareBuilder
from web3.types import Wei

from crossfill_client import Client
from crossfill_client.models import WonOrder

_PAYMENT = {
    "type": "tuple[]",
    "name": "payments",
    "components": [
        {"name": "recipient", "type": "address"},
        {"name": "currency", "type": "address"},
        {"name": "amount", "type": "uint256"},
    ],
}
_EXCLUSIVITY = {
    "type": "tuple",
    "name": "exclusivity",
    "components": [
        {"name": "solver", "type": "address"},
        {"name": "deadline", "type": "uint256"},
        {"name": "fillDeadline", "type": "uint256"},
    ],
}
FILLER_ABI: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": "fillExclusive",
        "stateMutability": "payable",
        "inputs": [
            {"name": "orderId", "type": "bytes32"},
            _PAYMENT,
            _EXCLUSIVITY,
            {"name": "signature", "type": "bytes"},
        ],
        "outputs": [],
    },
]


class Filling:
    """Fills each order won, once; `fade` leaves them all unfilled (to see the fallback)."""

    def __init__(
        self, service: str, account: LocalAccount, rpc_urls: dict[int, str], *, fade: bool
    ) -> None:
        self.service = service
        self.account = account
        self.rpc_urls = rpc_urls
        self.fade = fade
        self.sent: dict[str, str] = {}  # order id -> fill transaction
        self._stop = threading.Event()

    def _web3(self, chain_id: int) -> Web3:
        web3 = Web3(Web3.HTTPProvider(self.rpc_urls[chain_id]))
        web3.middleware_onion.inject(SignAndSendRawMiddlewareBuilder.build(self.account), layer=0)
        web3.eth.default_account = self.account.address
        return web3

    def fill(self, order: WonOrder) -> str:
        """Send the order's fill; its transaction hash (mined, or it raises)."""
        web3 = self._web3(order.chain_id)
        filler = web3.eth.contract(address=Web3.to_checksum_address(order.filler), abi=FILLER_ABI)
        payments = [
            (Web3.to_checksum_address(p.recipient), Web3.to_checksum_address(p.currency),
             int(p.amount))
            for p in order.payments
        ]  # fmt: skip
        exclusivity = (
            Web3.to_checksum_address(order.solver),
            order.exclusivity_deadline,
            order.fill_deadline,
        )
        call = filler.functions.fillExclusive(
            bytes.fromhex(order.order_id[2:]),
            payments,
            exclusivity,
            bytes.fromhex(order.signature[2:]),
        )
        tx = call.transact({"value": Wei(int(order.value))})
        receipt = web3.eth.wait_for_transaction_receipt(tx, timeout=60)
        if receipt["status"] != 1:
            raise RuntimeError(f"the fill of {order.order_id} reverted")
        return "0x" + bytes(tx).hex()

    def run(self, poll_seconds: float = 0.25) -> None:
        with Client(self.service) as client:
            while not self._stop.is_set():
                for order in client.won_orders(self.account.address):
                    if self.fade or order.order_id in self.sent:
                        continue
                    try:
                        self.sent[order.order_id] = self.fill(order)
                        print(f"filled {order.request_id} {self.sent[order.order_id]}", flush=True)
                    except Exception as failure:  # the next poll tries again
                        print(f"fill of {order.request_id} failed: {failure}", flush=True)
                time.sleep(poll_seconds)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
