"""A test wallet: signs and sends a quote's transaction steps the way a real wallet would."""

from __future__ import annotations

from typing import Any

from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from web3 import Web3
from web3.types import TxReceipt, Wei


def broadcast_item(web3: Web3, account: LocalAccount, data: dict[str, Any]) -> str:
    """Sign one transaction item locally (EIP-1559) and broadcast it; its hash."""
    tx: dict[str, Any] = {
        "from": account.address,
        "to": Web3.to_checksum_address(data["to"]),
        "data": data["data"],
        "value": int(data["value"]),
        "chainId": int(data["chainId"]),
        "nonce": web3.eth.get_transaction_count(account.address, "pending"),
    }
    # Like a wallet: the dApp's gas limit when the item gives one, else the node's estimate.
    tx["gas"] = int(data["gas"]) if "gas" in data else web3.eth.estimate_gas(tx)  # type: ignore[arg-type]
    base_fee = int(web3.eth.get_block("latest")["baseFeePerGas"])
    tx["maxPriorityFeePerGas"] = 10**9
    tx["maxFeePerGas"] = 2 * base_fee + 10**9
    signed = account.sign_transaction(tx)
    return web3.eth.send_raw_transaction(signed.raw_transaction).to_0x_hex()


def send_item(web3: Web3, account: LocalAccount, data: dict[str, Any]) -> str:
    """Sign and broadcast one transaction item, then wait for a successful receipt."""
    tx_hash = broadcast_item(web3, account, data)
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
