"""Gas per repaid order: the repayer's transactions (`app.repayments`) measured on a devnet
chain, for ether and the test USDC, one deposit per transaction (a direct `Depository.execute`,
what pipelined transactions would each cost) and batches of 2 to 50 through the Multicaller.

Run: `python -m bench.repayment_gas` (starts its own devnet; about half a minute).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from eth_account import Account
from eth_account.signers.local import LocalAccount

from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from crossfill.kinds.evm.config import ChainConfig, evm_chains
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.devnets import running_devnet
from tests.support.repayment_batches import deposits_of, send_batch, signed_repayments

SIZES = (1, 2, 5, 10, 20, 50)


def gas_per_order(chain: ChainConfig, currency: str, size: int, sender: LocalAccount) -> int:
    """One batch of `size` deposits (1: a direct call) repaid to `sender`: its gas per order."""
    amount = 10**15 if currency == NATIVE_EVM_ADDRESS else 1_000_000
    payouts = signed_repayments(
        chain, deposits_of(chain, currency, [amount] * size), sender.address, accounts.allocator()
    )
    return send_batch(chain, sender, payouts).gas_used // size


def main() -> None:
    with tempfile.TemporaryDirectory() as home, running_devnet(Path(home)) as devnet:
        chain = evm_chains(devnet.deployment)[0]
        usdc = next(c.address for c in chain.erc20_currencies if c.symbol == "USDC")
        sender: LocalAccount = Account.create()
        set_native_balance(chain.rpc_url, sender.address, 10**20)
        for currency in (NATIVE_EVM_ADDRESS, usdc):
            # The solver holds both already: every batch below pays into a balance that
            # is not empty, as a running solver's is (a first payment to it costs more).
            gas_per_order(chain, currency, 1, sender)
        print("gas per repaid order (the batch's gasUsed / its deposits)")
        print(f"{'deposits per tx':>16} {'ETH':>8} {'USDC':>8}")
        for size in SIZES:
            ether = gas_per_order(chain, NATIVE_EVM_ADDRESS, size, sender)
            token = gas_per_order(chain, usdc, size, sender)
            print(f"{size:>16} {ether:>8} {token:>8}")


if __name__ == "__main__":
    main()
