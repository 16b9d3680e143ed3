"""Deposit → fill over serial native bridges on a devnet with real block times, each figure
beside a baseline measured in the same run.

For each bridge the bench quotes, signs and broadcasts the deposit like a wallet (with the
`POST /transactions/index` hint sent right after the broadcast for half of them, alternating),
and watches both chains over their websockets (`bench.chain_watch`):
- deposit mined: the moment the head of the block holding the deposit arrives;
- fill broadcast: the moment the fill arrives in the destination's pending pool — from the
  deposit's head to here is the service's share (it hears of the same head at the same time);
- fill mined: the moment the head of the block holding the fill arrives (end to end).
Baseline, after each bridge: two raw JSON-RPC round trips against the same anvils, the least a
filler can do (`eth_getLogs` of the deposit's block, `eth_sendRawTransaction` of a pre-signed
transaction). Also CPU ms per fill by process (service, chains, database) over the run.
Run: `python -m bench.fill [--bridges 50] [--block-time 1] [--database sqlite|postgres]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import tomllib
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr

from bench.chain_watch import ChainWatch, rpc, watching
from bench.common import RunningService, cpu_seconds, database_for, devnet_service, report
from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from tests.support.wallets.evm import GWEI, Fees, sign_item

NATIVE = "0x0000000000000000000000000000000000000000"
FEES = Fees(100 * GWEI, GWEI)  # what each of the bench's transactions offers per gas


@dataclass
class Figures:
    service_share: dict[bool, list[float]] = field(default_factory=lambda: {True: [], False: []})
    end_to_end: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)


@dataclass
class Wallet:
    """A funded account that signs type-2 transactions with nonces counted here."""

    account: LocalAccount
    chain_id: int
    nonce: int

    def sign(self, to: str, value: int, data: str = "0x") -> tuple[str, str]:
        item = {"to": to, "data": HexStr(data), "value": value, "chainId": self.chain_id}
        signed = sign_item(self.account, item, nonce=self.nonce, fees=FEES, gas=100_000)
        self.nonce += 1
        return signed.raw_transaction.to_0x_hex(), signed.hash.to_0x_hex()


@dataclass
class Run:
    http: aiohttp.ClientSession
    origin: ChainWatch
    destination: ChainWatch
    user: Wallet
    prober: Wallet  # signs the baseline's transactions on the destination
    quote_body: dict[str, Any]
    depository: str
    figures: Figures = field(default_factory=Figures)
    probes: set[str] = field(default_factory=set)

    async def bridge(self, *, hint: bool) -> None:
        async with self.http.post("/quote/v2", json=self.quote_body) as reply:
            quote = await reply.json()
        step = quote["steps"][0]
        item = step["items"][0]["data"]
        raw, tx_hash = self.user.sign(item["to"], int(item["value"]), item["data"])
        await rpc(self.http, self.origin.http_url, "eth_sendRawTransaction", [raw])
        if hint:
            body = {"txHash": tx_hash, "chainId": str(item["chainId"])}
            async with self.http.post("/transactions/index", json=body) as reply:
                reply.raise_for_status()
        block, deposited_at = await self.origin.mined_at(tx_hash)
        fill_hash, broadcast_at = await self.destination.first_pending(deposited_at, self.probes)
        _, filled_at = await self.destination.mined_at(fill_hash)
        await self._until_success(step["requestId"], fill_hash)
        self.figures.service_share[hint].append(broadcast_at - deposited_at)
        self.figures.end_to_end.append(filled_at - deposited_at)
        self.figures.baseline.append(await self._two_round_trips(block))

    async def _until_success(self, request_id: str, fill_hash: str) -> None:
        while True:
            params = {"requestId": request_id}
            async with self.http.get("/intents/status/v3", params=params) as reply:
                status = await reply.json()
            if status["status"] == "success":
                if fill_hash not in status["txHashes"]:
                    raise SystemExit(f"the pending transaction {fill_hash} was not the fill")
                return
            await asyncio.sleep(0.01)

    async def _two_round_trips(self, block: int) -> float:
        raw, probe_hash = self.prober.sign(self.prober.account.address, 0)
        self.probes.add(probe_hash)
        logs_filter = {"address": self.depository, "fromBlock": hex(block), "toBlock": hex(block)}
        started = time.perf_counter()
        await rpc(self.http, self.origin.http_url, "eth_getLogs", [logs_filter])
        await rpc(self.http, self.destination.http_url, "eth_sendRawTransaction", [raw])
        return time.perf_counter() - started


def _ratio(label: str, measured: list[float], baseline: list[float]) -> str:
    cuts, base = statistics.quantiles(measured, n=100), statistics.quantiles(baseline, n=100)
    return (
        f"{report(label, measured)}  (x{cuts[49] / base[49]:.1f} / x{cuts[98] / base[98]:.1f}"
        " the baseline's p50 / p99)"
    )


async def _measure(service: RunningService, bridges: int, database_url: str | None) -> None:
    deployment = tomllib.loads((service.home / "deployment.toml").read_text())
    origin, destination = deployment["chains"][0], deployment["chains"][1]
    user, prober = accounts.users()[4], accounts.users()[3]
    set_native_balance(origin["http_rpc_url"], user.address, 10_000 * 10**18)
    body = {
        "user": user.address,
        "originChainId": origin["id"],
        "destinationChainId": destination["id"],
        "originCurrency": NATIVE,
        "destinationCurrency": NATIVE,
        "amount": str(10**16),  # $30: one confirmation
        "tradeType": "EXACT_INPUT",
    }
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(service.base_url, timeout=timeout) as http:
        count = "eth_getTransactionCount"
        wallets = [
            Wallet(
                account,
                chain["id"],
                int(
                    await rpc(http, chain["http_rpc_url"], count, [account.address, "pending"]), 16
                ),
            )
            for account, chain in ((user, origin), (prober, destination))
        ]
        async with (
            watching(origin["ws_rpc_url"], origin["http_rpc_url"], http, pending=False) as o,
            watching(
                destination["ws_rpc_url"], destination["http_rpc_url"], http, pending=True
            ) as d,
        ):
            run = Run(http, o, d, wallets[0], wallets[1], body, origin["contracts"]["depository"])
            await run.bridge(hint=False)  # warm-up, not counted
            run.figures = Figures()
            cpu_before = cpu_seconds(service, database_url)
            for index in range(bridges):
                await run.bridge(hint=index % 2 == 1)
            cpu_after = cpu_seconds(service, database_url)
    figures = run.figures
    print(
        _ratio(
            "deposit mined -> fill broadcast, no hint",
            figures.service_share[False],
            figures.baseline,
        )
    )
    print(
        _ratio(
            "deposit mined -> fill broadcast, hint", figures.service_share[True], figures.baseline
        )
    )
    print(_ratio("deposit mined -> fill mined (end to end)", figures.end_to_end, figures.baseline))
    print(report("baseline: eth_getLogs + eth_sendRawTransaction", figures.baseline))
    cpu = {role: seconds * 1000 / bridges for role, seconds in cpu_after.since(cpu_before).items()}
    print("cpu per fill: " + "  ".join(f"{role}={ms:.1f} ms" for role, ms in cpu.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bridges", type=int, default=50)
    parser.add_argument("--block-time", type=float, default=1.0)
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    with (
        database_for(args.database) as database_url,
        devnet_service("--block-time", str(args.block_time), database_url=database_url) as service,
    ):
        print(f"{args.bridges} serial native bridges, {args.block_time} s blocks, {args.database}")
        asyncio.run(_measure(service, args.bridges, database_url))


if __name__ == "__main__":
    main()
