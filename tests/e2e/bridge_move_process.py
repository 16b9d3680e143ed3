"""A process that quotes a move of the main solver's ether through the peer, prints the quote
(one JSON line), and is SIGKILLed as its deposit, journalled and committed, would go to the
node: what `test_inventory_bridge` resumes from in another process.

    python -m tests.e2e.bridge_move_process DEPLOYMENT HOME PEER_URL ORIGIN DESTINATION WEI
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from crossfill.config import load_deployment
from crossfill.kinds.registry import SECTIONS
from crossfill.settings import Mode
from crossfill.treasury.bridge import BridgeQuote, Move
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.e2e.inventory_bridging import solver_side


async def _killed_while_sending(arguments: list[str]) -> None:
    deployment_path, home, peer_url = Path(arguments[0]), Path(arguments[1]), arguments[2]
    origin, destination, amount = (int(argument) for argument in arguments[3:6])
    deployment = load_deployment(deployment_path, mode=Mode.DEVNET, sections=SECTIONS)
    move = Move(origin, destination, NATIVE_EVM_ADDRESS, NATIVE_EVM_ADDRESS, amount)
    async with solver_side(deployment, deployment_path, peer_url, home, origin) as side:
        quote = await side.bridge.quote(move)
        assert isinstance(quote, BridgeQuote), quote
        print(json.dumps(quote.document()), flush=True)

        async def killed(_raw: bytes) -> str:
            os.kill(os.getpid(), signal.SIGKILL)
            raise AssertionError("not reached")

        side.chain.client.send_raw = killed  # type: ignore[method-assign,assignment]
        await side.bridge.send(quote)


if __name__ == "__main__":
    asyncio.run(_killed_while_sending(sys.argv[1:]))
