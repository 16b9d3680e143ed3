"""The money invariant, checked from the chains' own events: every unit that reached a
Depository (or the Receiver, for v1 orders) for an order within a block range is matched by
exactly one outcome, and no fill or payout is matched by none.

    report = account_for_money(deployment, database_url, since={chain_id: first_block})

An outcome is one of: a fill of its order (the Filler's `OrderFilled` on the destination
chain), a refund of it (a payout mined on chain paying back what the service says it paid,
the gas it kept stated as the difference), or a record that it was kept (too small to return,
or another reason) with no payout. The service's tables are read only for what the chain does
not say: which part of a deposit paid for which request, where it says it refunded it, and why
it kept it. Their word is checked against the chain wherever the chain can check it.

Deposit addresses: what a transfer into one pays is swept into the Depository (a deposit as
above); what stays at an address is held against the records that leave it there: its balance
in each currency must be what the transfers recorded too small to sweep add up to (less what
its recovery address took), once nothing is waiting for its sweep.

Scope: the EVM chains' Depository, token transfers into it with an order id (implicit
deposits), the Receiver and deposit addresses; fills to chains off the EVM (SVM, the perps
exchange) are taken from the service's records (counted as such).
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eth_abi.abi import decode
from eth_utils.crypto import keccak
from hexbytes import HexBytes
from sqlalchemy import select
from web3 import Web3

from crossfill.config import Deployment
from crossfill.devnet.deploy import contract_at
from crossfill.store.db import create_engine, session_factory
from crossfill.store.tables import AddressTransfer, AppFeeClaim, Deposit, Request

NATIVE = "0x" + "00" * 20
TRANSFER_TOPIC = "0x" + keccak(text="Transfer(address,address,uint256)").hex()
ERC20_TRANSFER_SELECTOR = keccak(text="transfer(address,uint256)")[:4]


@dataclass(frozen=True)
class ChainDeposit:
    """A deposit as its chain logged it."""

    chain_id: int
    tx_hash: str
    log_index: int
    order_id: str
    depositor: str
    currency: str
    amount: int
    via_receiver: bool = False

    def __str__(self) -> str:
        return f"{self.chain_id}:{self.tx_hash}:{self.log_index} ({self.amount} of {self.currency})"


@dataclass
class MoneyReport:
    deposits: int = 0
    filled: int = 0
    refunded: int = 0
    kept: int = 0
    # Outcomes the chain cannot show (a fill off the EVM chains): taken from the records.
    taken_from_records: int = 0
    # Not ended yet: a fill or a refund on its way.
    unsettled: list[str] = field(default_factory=list)
    # Broken: a unit with no outcome or two, a fill or payout with no deposit.
    unaccounted: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.deposits} deposits: {self.filled} filled, {self.refunded} refunded, "
            f"{self.kept} kept ({self.taken_from_records} fills off the EVM chains taken from "
            f"records); {len(self.unsettled)} unsettled, {len(self.unaccounted)} unaccounted"
        )


@dataclass(frozen=True)
class _Records:
    parts: dict[tuple[int, str, int], list[Deposit]]
    requests: dict[str, Request]
    requests_by_order: dict[str, Request]
    claim_payouts: set[str]
    address_transfers: list[AddressTransfer]


def account_for_money(
    deployment: Deployment, database_url: str, *, since: Mapping[int, int]
) -> MoneyReport:
    """The invariant over the blocks from `since[chain_id]` to each chain's head."""
    web3s: dict[int, Web3] = {
        chain.id: Web3(Web3.HTTPProvider(str(chain.http_rpc_url))) for chain in deployment.chains
    }
    heads = {chain_id: web3.eth.block_number for chain_id, web3 in web3s.items()}
    deposits: list[ChainDeposit] = []
    fills: Counter[str] = Counter()
    payout_txs: dict[int, set[str]] = {}
    for chain in deployment.chains:
        web3, start, end = web3s[chain.id], since.get(chain.id, 0), heads[chain.id]
        if start > end:
            payout_txs[chain.id] = set()
            continue  # no block since
        deposits += _depository_deposits(web3, chain.id, chain.contracts.depository, start, end)
        deposits += _receiver_deposits(web3, chain.id, chain.contracts.receiver, start, end)
        filler = contract_at(web3, "Filler", chain.contracts.filler)
        for event in filler.events.OrderFilled().get_logs(from_block=start, to_block=end):
            fills["0x" + bytes(event.args["orderId"]).hex()] += 1
        depository = contract_at(web3, "Depository", chain.contracts.depository)
        payout_txs[chain.id] = {
            event.transactionHash.to_0x_hex()
            for event in depository.events.CallExecuted().get_logs(from_block=start, to_block=end)
        }
    records = asyncio.run(_records(database_url))
    report = MoneyReport(deposits=len(deposits))
    evm_chains: set[int] = {chain.id for chain in deployment.chains}
    paid_orders: Counter[str] = Counter()
    refund_txs: set[str] = set()
    for deposit in deposits:
        parts = records.parts.get((deposit.chain_id, deposit.tx_hash, deposit.log_index), [])
        checker = _PartChecker(web3s[deposit.chain_id], deployment, records, fills, evm_chains)
        _account_deposit(deposit, parts, checker, report, paid_orders, refund_txs)
    for order_id, count in fills.items():
        request = records.requests_by_order.get(order_id)
        if request is not None and request.origin_chain_id not in evm_chains:
            continue  # paid on a chain this check does not read
        if paid_orders[order_id] != 1 or count != 1:
            report.unaccounted.append(
                f"order {order_id}: filled {count}x, paid by {paid_orders[order_id]} deposits"
            )
    _account_deposit_addresses(web3s, deployment, records, report)
    for chain_id, txs in payout_txs.items():
        for tx_hash in sorted(txs - refund_txs - records.claim_payouts):
            report.unaccounted.append(
                f"payout {chain_id}:{tx_hash} pays no deposit or claim"
                + _named_by(records, tx_hash)
            )
    return report


# The transfer rows whose funds stay at the deposit address: too small to sweep, or a sweep the
# chain refused (the recovery address took them, or the owner is gone).
_AT_THE_ADDRESS = frozenset({"too_small", "failed"})


def _account_deposit_addresses(
    web3s: Mapping[int, Web3], deployment: Deployment, records: _Records, report: MoneyReport
) -> None:
    """Each quoted deposit address holds, in each currency, exactly what its transfers recorded
    as left there add up to (too small to sweep), less what its recovery address took."""
    addresses = {
        (request.origin_chain_id, request.deposit_address.lower())
        for request in records.requests.values()
        if request.deposit_address is not None and request.origin_chain_id in web3s
    }
    for chain_id, address in sorted(addresses):
        chain = deployment.chain(chain_id)
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


def _recovered(web3: Web3, chain: Any, address: str, currency: str) -> int:
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


def _named_by(records: _Records, tx_hash: str) -> str:
    """Which recorded deposit names the payout, though not as its refund (for the report)."""
    named = [
        f"deposit {part.id} ({part.tx_hash}:{part.log_index}, refund {part.refund_status})"
        for parts in records.parts.values()
        for part in parts
        if part.refund_tx_hash == tx_hash
    ]
    return f"; named by {named}" if named else ""


def _account_deposit(
    deposit: ChainDeposit,
    parts: list[Deposit],
    checker: _PartChecker,
    report: MoneyReport,
    paid_orders: Counter[str],
    refund_txs: set[str],
) -> None:
    if not parts:
        report.unsettled.append(f"{deposit}: not recorded yet")
        return
    if sum(int(part.amount) for part in parts) != deposit.amount:
        report.unaccounted.append(f"{deposit}: its recorded parts do not add up")
        return
    for part in parts:
        outcome = checker.outcome(deposit, part)
        if outcome.startswith("unsettled"):
            report.unsettled.append(f"{deposit} part {part.part}: {outcome}")
        elif outcome.startswith("broken"):
            report.unaccounted.append(f"{deposit} part {part.part}: {outcome}")
        elif outcome == "filled":
            report.filled += 1
            paid_orders[deposit.order_id] += 1
        elif outcome == "filled (records)":
            report.filled += 1
            report.taken_from_records += 1
        elif outcome == "refunded":
            report.refunded += 1
            assert part.refund_tx_hash is not None
            refund_txs.add(part.refund_tx_hash)
        else:
            report.kept += 1


@dataclass
class _PartChecker:
    web3: Web3
    deployment: Deployment
    records: _Records
    fills: Counter[str]
    evm_chains: set[int]

    def outcome(self, deposit: ChainDeposit, part: Deposit) -> str:
        """filled | filled (records) | refunded | kept | unsettled: ... | broken: ..."""
        payout_used = self._payout_used(deposit, part)
        request = self.records.requests.get(part.request_id) if part.request_id else None
        paying = (
            part.outcome == "ACCEPTED" and part.part == 0 and request is not None
        )  # the part that pays for its request
        if paying and request is not None and request.status not in {"failure", "refund"}:
            if payout_used:
                return "broken: it pays for its request and was paid back too"
            if request.destination_chain_id not in self.evm_chains:
                return "filled (records)" if request.status == "success" else "unsettled: fill"
            return "filled" if self.fills[deposit.order_id] else "unsettled: fill on its way"
        if part.refund_status == "skipped":
            if payout_used:
                return "broken: kept, yet paid back"
            return "kept" if part.refund_fail_reason else "kept (no reason recorded)"
        if part.refund_status != "done" or part.refund_tx_hash is None:
            return "unsettled: refund on its way"
        if paying and self.fills[deposit.order_id]:
            return "broken: filled and refunded"
        paid = self._refund_paid(deposit, part)
        if paid is None:
            return f"broken: refund {part.refund_tx_hash} is not a payout of it on chain"
        if paid != int(part.refund_amount or -1) or not 0 < paid <= int(part.amount):
            return f"broken: refund paid {paid}, the service says {part.refund_amount}"
        return "refunded"

    def _payout_used(self, deposit: ChainDeposit, part: Deposit) -> bool:
        if deposit.via_receiver:
            return False  # a v1 refund is the solver's own transfer: no payout nonce
        depository = contract_at(
            self.web3, "Depository", self._contracts(deposit.chain_id).depository
        )
        suffix = ":1" if part.part == 1 else ""
        nonce = int.from_bytes(keccak(f"{deposit.tx_hash}:{deposit.log_index}{suffix}".encode()))
        return bool(depository.functions.nonceUsed(nonce).call())

    def _contracts(self, chain_id: int) -> Any:
        chain = self.deployment.chain(chain_id)
        assert chain is not None
        return chain.contracts

    def _refund_paid(self, deposit: ChainDeposit, part: Deposit) -> int | None:
        """What the refund transaction paid back, read from the chain; None when it is no
        successful payout of this deposit's currency."""
        receipt = self.web3.eth.get_transaction_receipt(HexBytes(str(part.refund_tx_hash)))
        if receipt["status"] != 1:
            return None
        if deposit.via_receiver:
            sent = self.web3.eth.get_transaction(HexBytes(str(part.refund_tx_hash)))
            return int(sent["value"])
        depository = contract_at(
            self.web3, "Depository", self._contracts(deposit.chain_id).depository
        )
        paid = 0
        for event in depository.events.CallExecuted().process_receipt(receipt):
            paid += _call_pays(event.args["call"], deposit.currency)
        return paid or None


def _call_pays(call: Any, currency: str) -> int:
    """What one Depository call pays out in `currency` (ether as value, a token by transfer)."""
    to, value, data = (
        (call["to"], call["value"], call["data"]) if isinstance(call, Mapping) else call[:3]
    )
    if currency == NATIVE:
        return int(value)
    data = bytes(data)
    if str(to).lower() != currency or data[:4] != ERC20_TRANSFER_SELECTOR:
        return 0
    _recipient, amount = decode(["address", "uint256"], data[4:])
    return int(amount)


def _depository_deposits(
    web3: Web3, chain_id: int, address: str, start: int, end: int
) -> list[ChainDeposit]:
    depository = contract_at(web3, "Depository", address)
    found: list[ChainDeposit] = []
    explicit_txs: set[str] = set()
    for name in ("NativeDeposit", "Erc20Deposit"):
        for event in getattr(depository.events, name)().get_logs(from_block=start, to_block=end):
            tx_hash = event.transactionHash.to_0x_hex()
            explicit_txs.add(tx_hash)
            found.append(
                ChainDeposit(
                    chain_id, tx_hash, int(event.logIndex), "0x" + bytes(event.args["id"]).hex(),
                    str(event.args["from"]).lower(), str(event.args.get("token", NATIVE)).lower(),
                    int(event.args["amount"]),
                )
            )  # fmt: skip
    topic = "0x" + "00" * 12 + address.lower()[2:]
    for entry in web3.eth.get_logs(
        {"fromBlock": start, "toBlock": end, "topics": [TRANSFER_TOPIC, None, topic]}
    ):
        tx_hash = entry["transactionHash"].to_0x_hex()
        if tx_hash in explicit_txs:
            continue  # the token's own log of an explicit deposit
        tx = web3.eth.get_transaction(entry["transactionHash"])
        order_id = bytes(tx["input"])[-32:]
        if len(bytes(tx["input"])) < 4 + 64 + 32 or order_id[:16] == b"\0" * 16:
            continue  # no order named: not a deposit for an order
        found.append(
            ChainDeposit(
                chain_id, tx_hash, int(entry["logIndex"]), "0x" + order_id.hex(),
                str(tx["from"]).lower(), entry["address"].lower(),
                int.from_bytes(bytes(entry["data"])),
            )
        )  # fmt: skip
    return found


def _receiver_deposits(
    web3: Web3, chain_id: int, address: str, start: int, end: int
) -> list[ChainDeposit]:
    """Ether the Receiver forwarded with an order id (v1): the transaction's own value."""
    receiver = contract_at(web3, "Receiver", address)
    found: list[ChainDeposit] = []
    for event in receiver.events.FundsForwardedWithData().get_logs(from_block=start, to_block=end):
        data = bytes(event.args["data"])
        tx = web3.eth.get_transaction(event.transactionHash)
        if len(data) != 32 or str(tx["to"]).lower() != address.lower():
            continue
        found.append(
            ChainDeposit(
                chain_id, event.transactionHash.to_0x_hex(), int(event.logIndex),
                "0x" + data.hex(), str(tx["from"]).lower(), NATIVE, int(tx["value"]),
                via_receiver=True,
            )
        )  # fmt: skip
    return found


async def _records(database_url: str) -> _Records:
    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            parts: dict[tuple[int, str, int], list[Deposit]] = defaultdict(list)
            for row in await session.scalars(select(Deposit).order_by(Deposit.part)):
                if row.state != "reorged":
                    parts[(row.chain_id, row.tx_hash, row.log_index)].append(row)
            requests = {row.id: row for row in await session.scalars(select(Request))}
            claims = {
                row.tx_hash for row in await session.scalars(select(AppFeeClaim)) if row.tx_hash
            }
            transfers = list(await session.scalars(select(AddressTransfer)))
    finally:
        await engine.dispose()
    by_order = {request.order_id: request for request in requests.values()}
    return _Records(dict(parts), requests, by_order, claims, transfers)


def heads(deployment: Deployment) -> dict[int, int]:
    """Each EVM chain's head now: where a check of what follows starts (its next block)."""
    return {
        chain.id: Web3(Web3.HTTPProvider(str(chain.http_rpc_url))).eth.block_number + 1
        for chain in deployment.chains
    }


def wait_until_accounted(
    check: Callable[[], MoneyReport], *, timeout: float, interval: float = 1.0
) -> MoneyReport:
    """The report once nothing is unsettled (or the timeout passed): what a test asserts on."""
    import time

    deadline = time.monotonic() + timeout
    report = check()
    while report.unsettled and time.monotonic() < deadline:
        time.sleep(interval)
        report = check()
    return report
