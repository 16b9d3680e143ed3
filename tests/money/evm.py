"""An EVM chain as the checker reads it: the Depository's deposits (and token transfers into it
naming an order: implicit deposits), the Receiver's forwarded ether (v1), the Filler's
`OrderFilled`, and the Depository's payouts (`CallExecuted`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from eth_abi.abi import decode
from eth_utils.crypto import keccak
from hexbytes import HexBytes
from web3 import Web3
from web3.logs import DISCARD

from crossfill.devnet.deploy import contract_at
from crossfill.kinds.evm.config import ChainConfig
from crossfill.store.tables import Deposit, Repayment
from tests.money.ledger import ChainDeposit, Shown
from tests.money.records import Records

NATIVE = "0x" + "00" * 20
TRANSFER_TOPIC = "0x" + keccak(text="Transfer(address,address,uint256)").hex()
ERC20_TRANSFER_SELECTOR = keccak(text="transfer(address,uint256)")[:4]


def web3_of(chain: ChainConfig) -> Web3:
    return Web3(Web3.HTTPProvider(str(chain.http_rpc_url)))


class EvmLedger:
    """The chain's blocks from `start` to `end` (its head when the check began); `solver`: the
    only account repayments may pay."""

    def __init__(
        self, chain: ChainConfig, web3: Web3, start: int, end: int, *, solver: str
    ) -> None:
        self.chain_id = chain.id
        self.chain = chain
        self.web3 = web3
        self.solver = solver.lower()
        self.deposits: list[ChainDeposit] = []
        self.fills: Counter[str] = Counter()
        self.payouts: set[str] = set()
        if start > end:
            return  # no block since
        contracts = chain.contracts
        self.deposits += _depository_deposits(web3, chain.id, contracts.depository, start, end)
        self.deposits += _receiver_deposits(web3, chain.id, contracts.receiver, start, end)
        filler = contract_at(web3, "Filler", contracts.filler)
        for event in filler.events.OrderFilled().get_logs(from_block=start, to_block=end):
            self.fills["0x" + bytes(event.args["orderId"]).hex()] += 1
        depository = contract_at(web3, "Depository", contracts.depository)
        self.payouts = {
            event.transactionHash.to_0x_hex()
            for event in depository.events.CallExecuted().get_logs(from_block=start, to_block=end)
        }

    def shown(self, records: Records) -> Shown:
        """Its fills, and its payouts but the repayments: each of those transactions pays the
        solver exactly what the records say it repaid, nothing else (else it is broken)."""
        repaid: dict[str, Counter[tuple[str, str, int]]] = {}
        for row in records.repayments.values():
            if row.chain_id == self.chain_id and row.state == "repaid" and row.tx_hash:
                paid = (self._repaid_to(row, records), row.currency.lower(), int(row.amount))
                repaid.setdefault(row.tx_hash, Counter())[paid] += 1
        broken = [
            f"repayment {self.chain_id}:{tx_hash} pays {dict(chain_says)}, "
            f"the records say {dict(recorded)}"
            for tx_hash, recorded in repaid.items()
            if (chain_says := self._repayment_paid(tx_hash)) != recorded
        ]
        return Shown(fills=self.fills, payouts=self.payouts - set(repaid), broken=broken)

    def _repaid_to(self, row: Repayment, records: Records) -> str:
        """Whom a repayment may pay: the solver; or, for an order an external solver won and
        its records say it filled, that solver."""
        request = records.requests.get(row.request_id) if row.request_id else None
        winner = None if request is None else request.exclusive_solver
        if winner is not None and row.recipient.lower() == winner.lower():
            return winner.lower()
        return self.solver

    def _repayment_paid(self, tx_hash: str) -> Counter[tuple[str, str, int]]:
        """What a transaction's Depository payouts paid whom, in which currency."""
        receipt = self.web3.eth.get_transaction_receipt(HexBytes(tx_hash))
        if receipt["status"] != 1:
            return Counter()
        depository = contract_at(self.web3, "Depository", self.chain.contracts.depository)
        return Counter(
            _call_paid(event.args["call"])
            for event in depository.events.CallExecuted().process_receipt(receipt, errors=DISCARD)
        )

    def paid_back_too(self, deposit: ChainDeposit, part: Deposit) -> bool:
        """Whether the part's payout nonce is used (the Depository pays a deposit back under
        a nonce derived from it, once at most)."""
        if deposit.via_receiver:
            return False  # a v1 refund is the solver's own transfer: no payout nonce
        depository = contract_at(self.web3, "Depository", self.chain.contracts.depository)
        suffix = ":1" if part.part == 1 else ""
        nonce = int.from_bytes(keccak(f"{deposit.tx_hash}:{deposit.log_index}{suffix}".encode()))
        return bool(depository.functions.nonceUsed(nonce).call())

    def refund_paid(self, deposit: ChainDeposit, part: Deposit, records: Records) -> int | None:
        """What the refund transaction paid out in the deposit's currency (ether as value, a
        token by transfer), read from its receipt."""
        receipt = self.web3.eth.get_transaction_receipt(HexBytes(str(part.refund_tx_hash)))
        if receipt["status"] != 1:
            return None
        if deposit.via_receiver:
            sent = self.web3.eth.get_transaction(HexBytes(str(part.refund_tx_hash)))
            return int(sent["value"])
        depository = contract_at(self.web3, "Depository", self.chain.contracts.depository)
        paid = 0
        for event in depository.events.CallExecuted().process_receipt(receipt, errors=DISCARD):
            paid += _call_pays(event.args["call"], deposit.currency)
        return paid or None


def _call_paid(call: Any) -> tuple[str, str, int]:
    """Whom one Depository call paid, in which currency, how much (ether as value, a token
    by transfer)."""
    to, value, data = (
        (call["to"], call["value"], call["data"]) if isinstance(call, Mapping) else call[:3]
    )
    data = bytes(data)
    if not data:
        return (str(to).lower(), NATIVE, int(value))
    if data[:4] != ERC20_TRANSFER_SELECTOR:
        return (str(to).lower(), "a call", 0)
    recipient, amount = decode(["address", "uint256"], data[4:])
    return (str(recipient).lower(), str(to).lower(), int(amount))


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
