"""External solvers on the devnet, as the RFQ e2e tests run them: the reference solver
(`examples/solver/solver.py`) as its own process, and hostile ones answering bid requests
badly from one HTTP server (`HostileSolvers`), each registered through the admin API with a
bond posted on the destination's `SolverBond`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from eth_account import Account
from eth_account.signers.local import LocalAccount

from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.rfq import Bid
from crossfill.kinds.evm.config import evm_chain
from crossfill.types import Address
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, OPERATOR, OPERATOR_TOKEN, ORIGIN

REFERENCE_SOLVER = Path(__file__).parents[2] / "examples" / "solver" / "solver.py"
ROUTE = {"originChainId": ORIGIN, "destinationChainId": DESTINATION, "currencies": [NATIVE]}


def solver_bond(devnet: RunningDevnet) -> str:
    chain = evm_chain(devnet.deployment, DESTINATION)
    assert chain is not None and chain.contracts.solver_bond is not None
    return chain.contracts.solver_bond


def bonded_account(devnet: RunningDevnet, wei: int) -> LocalAccount:
    """A new account with ether on the destination and `wei` of it bonded there."""
    account: LocalAccount = Account.create()
    chain = evm_chain(devnet.deployment, DESTINATION)
    assert chain is not None
    set_native_balance(chain.rpc_url, account.address, wei + 10**19)
    if wei:
        web3 = signing_web3(chain.rpc_url, account)
        bond = contract_at(web3, "SolverBond", solver_bond(devnet))
        send(web3, bond.functions.deposit(NATIVE, wei), value=wei)
    return account


def register(base_url: str, name: str, account: str, bid_url: str, **fields: Any) -> Any:
    body = {
        "name": name,
        "addresses": {"evm": account},
        "bidUrl": bid_url,
        "routes": [ROUTE],
        "maxSizeUsd": "1000000",
        **fields,
    }
    answer = httpx.post(f"{base_url}/admin/solvers", json=body, headers=OPERATOR, timeout=30)
    assert answer.status_code == 201, answer.text
    return answer.json()


@contextmanager
def reference_solver(
    base_url: str,
    devnet: RunningDevnet,
    name: str,
    *,
    fee_bps: int,
    bond_ether: float = 5,
    fade: bool = False,
) -> Iterator[LocalAccount]:
    """`examples/solver/solver.py` running as `name`, bonded and registered (bidding, and
    filling what it wins unless it `fade`s); stopped after."""
    account: LocalAccount = Account.create()
    chain = evm_chain(devnet.deployment, DESTINATION)
    assert chain is not None
    set_native_balance(chain.rpc_url, account.address, int((bond_ether + 10) * 10**18))
    command = [
        sys.executable, str(REFERENCE_SOLVER), "--service", base_url,
        "--admin-token", OPERATOR_TOKEN, "--key", account.key.hex(), "--name", name,
        "--route", f"{ORIGIN}:{DESTINATION}:{NATIVE}", "--bond-ether", str(bond_ether),
        "--fee-bps", str(fee_bps), *(["--fade"] if fade else []),
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ
    )
    try:
        _wait_ready(process)
        yield account
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def _wait_ready(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith("ready "):
            return
    raise AssertionError(f"the reference solver did not start: {''.join(seen)}")


# How each hostile solver answers a bid request (the path it is registered under).
BAD_SIGNATURE = "bad-signature"  # a bid naming it, signed by another key
STRANGER = "stranger"  # a bid by an unregistered key, naming that key
ABOVE_BOND = "above-bond"  # its own valid bid, for far more than its bond covers
HANGS = "hangs"  # never answers in time
GARBAGE = "garbage"  # bytes that are no JSON
HUGE = "huge"  # a valid bid padded to megabytes
LATE = "late"  # its own valid bid, after the deadline
HOSTILE = (BAD_SIGNATURE, STRANGER, ABOVE_BOND, HANGS, GARBAGE, HUGE, LATE)


@dataclass
class HostileSolvers:
    """One HTTP server answering as each hostile solver; `asked` counts requests per kind."""

    bond_contract: str
    late_seconds: float
    accounts: dict[str, LocalAccount] = field(default_factory=dict)
    asked: Counter[str] = field(default_factory=Counter)
    stranger: LocalAccount = field(default_factory=Account.create)

    def bid(self, kind: str, request: dict[str, Any]) -> bytes:
        """A bid paying a hundred times the input: it would win if it were ever taken."""
        signer = self.stranger if kind in (BAD_SIGNATURE, STRANGER) else self.accounts[kind]
        named = self.stranger if kind == STRANGER else self.accounts[kind]
        unsigned = Bid(
            quote_id=request["quoteId"],
            solver=Address(named.address),
            output=int(request["amountIn"]) * 100,
            expiry=int(request["expiry"]) + 60,
            signature="0x",
        )
        signable = unsigned.signable(int(request["destinationChainId"]), self.bond_contract)
        signed = replace(
            unsigned, signature="0x" + bytes(signer.sign_message(signable).signature).hex()
        )
        return json.dumps(
            {
                "quoteId": signed.quote_id,
                "solver": signed.solver,
                "output": str(signed.output),
                "expiry": signed.expiry,
                "signature": signed.signature,
            }
        ).encode()

    def answer(self, kind: str, request: dict[str, Any]) -> bytes:
        self.asked[kind] += 1
        if kind == HANGS:
            time.sleep(30)
        if kind == GARBAGE:
            return b"\x00\xffnot a bid{{"
        if kind == LATE:
            time.sleep(self.late_seconds)
        bid = self.bid(kind, request)
        if kind == HUGE:
            return bid[:-1] + b', "padding": "' + b"x" * 5_000_000 + b'"}'
        return bid

    @contextmanager
    def serving(self) -> Iterator[str]:
        """The server's base URL while it runs."""
        solvers = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                try:
                    payload = solvers.answer(self.path.strip("/"), body["request"])
                    self.send_response(200)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the service stopped waiting: as it should

            def log_message(self, format: str, *args: Any) -> None:
                return

        class Server(ThreadingHTTPServer):
            # Every hostile solver is asked at once: a backlog of 5 would drop connections.
            request_queue_size = 64
            daemon_threads = True

        server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
