"""A user's wallet on an EVM chain: signs transaction items (a quote's steps, or any call) with
an eth-account key, EIP-1559, and sends them to the chain's node."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eth_account.datastructures import SignedTransaction
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from web3 import Web3
from web3.types import TxReceipt, Wei

GWEI = 10**9


@dataclass(frozen=True)
class Fees:
    """What a transaction offers per gas (EIP-1559)."""

    max_fee_per_gas: int
    max_priority_fee_per_gas: int = GWEI


def wallet_fees(web3: Web3) -> Fees:
    """What a wallet offers: twice the latest base fee, and a 1 gwei tip."""
    base_fee = int(web3.eth.get_block("latest")["baseFeePerGas"])
    return Fees(2 * base_fee + GWEI, GWEI)


def sign_item(
    account: LocalAccount,
    item: Mapping[str, Any],
    *,
    nonce: int,
    fees: Fees,
    gas: int | None = None,
    value: int | None = None,
) -> SignedTransaction:
    """One transaction item (`to`, `data`, `value`, `chainId`, and `gas` unless given here)
    signed by `account` under `nonce`; `value`, when given, instead of the item's (a deposit
    of another amount than quoted)."""
    tx: dict[str, Any] = {
        "to": Web3.to_checksum_address(item["to"]),
        "data": item["data"],
        "value": int(item["value"]) if value is None else value,
        "chainId": int(item["chainId"]),
        "nonce": nonce,
        "gas": int(item["gas"]) if gas is None else gas,
        "maxFeePerGas": fees.max_fee_per_gas,
        "maxPriorityFeePerGas": fees.max_priority_fee_per_gas,
    }
    return account.sign_transaction(tx)


def broadcast_item(
    web3: Web3, account: LocalAccount, item: Mapping[str, Any], *, fees: Fees | None = None
) -> str:
    """Sign one transaction item as a wallet does and broadcast it; its hash. The next nonce
    the node knows of (pending ones counted), the item's gas limit when it gives one, else the
    node's estimate; a wallet's fees unless `fees`."""
    nonce = web3.eth.get_transaction_count(account.address, "pending")
    gas = int(item["gas"]) if "gas" in item else _estimate_gas(web3, account, item, nonce)
    signed = sign_item(account, item, nonce=nonce, fees=fees or wallet_fees(web3), gas=gas)
    return web3.eth.send_raw_transaction(signed.raw_transaction).to_0x_hex()


def _estimate_gas(web3: Web3, account: LocalAccount, item: Mapping[str, Any], nonce: int) -> int:
    call: dict[str, Any] = {
        "from": account.address,
        "to": Web3.to_checksum_address(item["to"]),
        "data": item["data"],
        "value": int(item["value"]),
        "chainId": int(item["chainId"]),
        "nonce": nonce,
    }
    return web3.eth.estimate_gas(call)  # type: ignore[arg-type]


def send_item(web3: Web3, account: LocalAccount, item: Mapping[str, Any]) -> str:
    """Sign and broadcast one transaction item, then wait for a successful receipt."""
    tx_hash = broadcast_item(web3, account, item)
    receipt = web3.eth.wait_for_transaction_receipt(HexStr(tx_hash), timeout=30)
    assert receipt["status"] == 1, f"step transaction reverted: {tx_hash}"
    return tx_hash


def execute_steps(
    quote: dict[str, Any], account: LocalAccount, rpc_urls: dict[int, str]
) -> dict[str, str]:
    """Run every transaction step in order; step id -> transaction hash."""
    sent: dict[str, str] = {}
    for step in quote["steps"]:
        assert step["kind"] == "transaction"
        for item in step["items"]:
            web3 = Web3(Web3.HTTPProvider(rpc_urls[int(item["data"]["chainId"])]))
            sent[step["id"]] = send_item(web3, account, item["data"])
    return sent


def pay_by_self_destruct(web3: Web3, payer: LocalAccount, address: str, amount: Wei) -> TxReceipt:
    """A contract created and destroyed in one transaction (creation code `PUSH20 address
    SELFDESTRUCT`, sent with `amount`) hands its balance to `address`: no call pays it.
    `web3` signs for `payer` (`devnet.deploy.signing_web3`)."""
    code = HexStr("0x73" + address.lower()[2:] + "ff")
    sent = web3.eth.send_transaction({"from": payer.address, "data": code, "value": amount})
    return web3.eth.wait_for_transaction_receipt(sent, timeout=60)
