"""A payer process for the kill -9 test: pays every order once, then exits 0.

python -m tests.integration.svm.pay_loop <database url> <rpc url> <usdc mint> <count>
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from datetime import UTC, datetime

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from crossfill.devnet.svm import accounts
from crossfill.errors import ChainError
from crossfill.kinds.payment_outcomes import Paid
from crossfill.kinds.svm.client import SvmClient
from crossfill.kinds.svm.payer import SvmPayer
from crossfill.kinds.svm.transactions import SvmPaymentOrder
from crossfill.types import ChainId
from tests.support.database import sessions_of


def recipient(index: int) -> Pubkey:
    return Keypair.from_seed(hashlib.sha256(f"recipient {index}".encode()).digest()).pubkey()


def order(index: int, usdc_mint: Pubkey) -> SvmPaymentOrder:
    """Even orders pay SOL, odd ones USDC (creating the recipient's token account)."""
    mint = usdc_mint if index % 2 else None
    return SvmPaymentOrder(
        purpose="fill",
        key=f"order-{index}",
        recipient=recipient(index),
        mint=mint,
        amount=(index + 1) * 1_000_000,
        decimals=6 if mint else 9,
        memo=f"fill order-{index}",
    )


async def main(database_url: str, rpc_url: str, usdc_mint: str, count: int) -> None:
    client = SvmClient(ChainId(792703809), rpc_url)
    async with sessions_of(database_url) as sessions:
        payer = SvmPayer(client, accounts.solver(), sessions, now=lambda: datetime.now(UTC))
        orders = [order(index, Pubkey.from_string(usdc_mint)) for index in range(count)]
        unpaid = list(orders)
        while unpaid:
            for each in list(unpaid):
                try:
                    if isinstance(await payer.pay(each), Paid):
                        unpaid.remove(each)
                except ChainError:
                    pass
            await asyncio.sleep(0.05)
    await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
