"""Deposit receipt → fill, over many sequential native bridges on an automining devnet.

For each bridge: quote, sign and send the deposit like a wallet, hint the indexer, and watch
the status. Reports, p50/p99:
- end to end: from the deposit's receipt to the status reading `success` (fill mined);
- service part: from the deposit's receipt to the fill transaction being signed and journaled
  (read from the service's own database), i.e. time spent inside the service.
Run: `.venv/bin/python -m bench.fill [--bridges 120]`.
"""

from __future__ import annotations

import argparse
import sqlite3
import time
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from web3 import Web3

from bench.common import devnet_service, report
from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance

NATIVE = "0x0000000000000000000000000000000000000000"


def _fill_signed_at(database: Path, request_id: str) -> float:
    with sqlite3.connect(database) as connection:
        (created_at,) = connection.execute(
            "SELECT created_at FROM sent_transactions WHERE request_id = ? AND purpose = 'fill'",
            (request_id,),
        ).fetchone()
    return datetime.fromisoformat(created_at).timestamp()


def _bridge(
    http: httpx.Client, web3: Web3, body: dict[str, Any], user: Any
) -> tuple[str, float, float]:
    quote = http.post("/quote/v2", json=body).raise_for_status().json()
    item = quote["steps"][0]["items"][0]["data"]
    base_fee = int(web3.eth.get_block("latest")["baseFeePerGas"])
    signed = user.sign_transaction(
        {
            "to": Web3.to_checksum_address(item["to"]),
            "data": item["data"],
            "value": int(item["value"]),
            "chainId": item["chainId"],
            "nonce": web3.eth.get_transaction_count(user.address),
            "gas": 100_000,
            "maxFeePerGas": 2 * base_fee + 10**9,
            "maxPriorityFeePerGas": 10**9,
        }
    )
    tx_hash = web3.eth.send_raw_transaction(signed.raw_transaction)
    web3.eth.wait_for_transaction_receipt(tx_hash, poll_latency=0.002)
    deposited_at = time.time()
    http.post(
        "/transactions/index", json={"txHash": tx_hash.to_0x_hex(), "chainId": str(item["chainId"])}
    )
    request_id = quote["steps"][0]["requestId"]
    while (
        http.get("/intents/status/v3", params={"requestId": request_id}).json()["status"]
        != "success"
    ):
        time.sleep(0.002)
    return request_id, deposited_at, time.time()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bridges", type=int, default=120)
    args = parser.parse_args()
    end_to_end: list[float] = []
    inside: list[float] = []
    with devnet_service("--block-time", "0") as service:
        deployment = tomllib.loads((service.home / "deployment.toml").read_text())
        origin, destination = deployment["chains"][0], deployment["chains"][1]
        web3 = Web3(Web3.HTTPProvider(origin["http_rpc_url"]))
        user = accounts.users()[4]
        set_native_balance(origin["http_rpc_url"], user.address, 10_000 * 10**18)
        body = {
            "user": user.address,
            "originChainId": origin["id"],
            "destinationChainId": destination["id"],
            "originCurrency": NATIVE,
            "destinationCurrency": NATIVE,
            "amount": str(10**16),
            "tradeType": "EXACT_INPUT",
        }
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            for _ in range(50):  # until the followers have fees and inventory
                if http.post("/quote/v2", json=body).status_code == 200:
                    break
                time.sleep(0.2)
            for _ in range(args.bridges):
                request_id, deposited_at, done_at = _bridge(http, web3, body, user)
                end_to_end.append(done_at - deposited_at)
                inside.append(
                    _fill_signed_at(service.home / "crossfill.db", request_id) - deposited_at
                )
    print(f"native bridges on an automining devnet: {args.bridges}")
    print(report("deposit receipt -> success (end to end)", end_to_end))
    print(report("deposit receipt -> fill signed (inside the service)", inside))


if __name__ == "__main__":
    main()
