"""Deposit addresses, held against the records that leave funds at them: what a transfer into
one pays is swept into the Depository (a deposit, read with the chain's other deposits); what
stays at an address must be what its transfers recorded too small to sweep add up to (less
what its recovery address took), once nothing is waiting for its sweep."""

from __future__ import annotations

from collections.abc import Mapping

from web3 import Web3

from crossfill.config import Deployment
from crossfill.devnet.deploy import contract_at
from crossfill.kinds.evm.config import ChainConfig, evm_chain
from tests.money.evm import NATIVE
from tests.money.ledger import MoneyReport
from tests.money.records import Records

# The transfer rows whose funds stay at the deposit address: too small to sweep, or a sweep the
# chain refused (the recovery address took them, or the owner is gone).
_AT_THE_ADDRESS = frozenset({"too_small", "failed"})


def account_deposit_addresses(
    web3s: Mapping[int, Web3], deployment: Deployment, records: Records, report: MoneyReport
) -> None:
    """Each quoted deposit address holds, in each currency, exactly what its transfers recorded
    as left there add up to (too small to sweep), less what its recovery address took."""
    addresses = {
        (request.origin_chain_id, request.deposit_address.lower())
        for request in records.requests.values()
        if request.deposit_address is not None and request.origin_chain_id in web3s
    }
    for chain_id, address in sorted(addresses):
        chain = evm_chain(deployment, chain_id)
        assert chain is not None
        web3 = web3s[chain_id]
        for currency in [NATIVE, *(c.address.lower() for c in chain.erc20_currencies)]:
            rows = [
                row
                for row in records.address_transfers
                if row.chain_id == chain_id
                and row.address.lower() == address
                and row.currency.lower() == currency
                and row.state != "reorged"
            ]
            if any(row.state == "seen" for row in rows):
                report.unsettled.append(f"deposit address {chain_id}:{address}: sweep on its way")
                continue
            left = sum(int(row.amount) for row in rows if row.state in _AT_THE_ADDRESS)
            held = _balance(web3, address, currency) + _recovered(web3, chain, address, currency)
            if held != left:
                report.unaccounted.append(
                    f"deposit address {chain_id}:{address} holds {held} of {currency}; "
                    f"its records leave {left} there"
                )
            else:
                report.kept += sum(1 for row in rows if row.state == "too_small")


def _balance(web3: Web3, address: str, currency: str) -> int:
    holder = Web3.to_checksum_address(address)
    if currency == NATIVE:
        return int(web3.eth.get_balance(holder))
    return int(contract_at(web3, "TestUSDC", currency).functions.balanceOf(holder).call())


def _recovered(web3: Web3, chain: ChainConfig, address: str, currency: str) -> int:
    """What the address's recovery address took out of it (the factory's `Recovered`)."""
    factory = chain.contracts.deposit_address_factory
    if factory is None:
        return 0
    taken = 0
    for event in (
        contract_at(web3, "DepositAddressFactory", factory)
        .events.Recovered()
        .get_logs(from_block=0)
    ):
        if str(event.args["depositAddress"]).lower() == address and (
            str(event.args["token"]).lower() == currency
        ):
            taken += int(event.args["amount"])
    return taken
