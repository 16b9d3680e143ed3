"""A transaction item on an EVM chain: filled in as a wallet does (nonce, gas, fees), signed,
broadcast, and followed to its receipt."""

from __future__ import annotations

import asyncio

from pydantic import JsonValue

from crossfill_client._rpc import JsonRpc, quantity
from crossfill_client.errors import ChainRpcError, TransactionReverted
from crossfill_client.models.quote import EvmTransactionData
from crossfill_client.signers import EvmSigner, EvmTransaction

GWEI = 10**9
# What a node estimates is what the call took then: a little more leaves room for state
# that moved since.
_GAS_HEADROOM_PERCENT = 120


async def _fees(rpc: JsonRpc, item: EvmTransactionData) -> tuple[int, int]:
    """(max fee, priority fee) per gas: the item's, else twice the latest base fee plus the
    node's suggested tip."""
    tip = item.max_priority_fee_per_gas
    if tip is None:
        try:
            tip = quantity(await rpc.call("eth_maxPriorityFeePerGas"))
        except ChainRpcError:
            tip = GWEI
    if item.max_fee_per_gas is not None:
        return item.max_fee_per_gas, tip
    block = await rpc.call("eth_getBlockByNumber", "latest", False)
    base_fee = block.get("baseFeePerGas") if isinstance(block, dict) else None
    if base_fee is None:
        return quantity(await rpc.call("eth_gasPrice")), tip
    return 2 * quantity(base_fee) + tip, tip


async def _gas(rpc: JsonRpc, sender: str, item: EvmTransactionData) -> int:
    if item.gas is not None:
        return item.gas
    call: dict[str, JsonValue] = {
        "from": sender,
        "to": item.to,
        "data": item.data,
        "value": hex(item.value),
    }
    estimate = quantity(await rpc.call("eth_estimateGas", call))
    return estimate * _GAS_HEADROOM_PERCENT // 100


async def send_evm_transaction(rpc: JsonRpc, signer: EvmSigner, item: EvmTransactionData) -> str:
    """Sign and broadcast the item from `signer`; its transaction hash."""
    nonce = quantity(await rpc.call("eth_getTransactionCount", signer.address, "pending"))
    max_fee, tip = await _fees(rpc, item)
    transaction = EvmTransaction(
        chain_id=item.chain_id,
        nonce=nonce,
        to=item.to,
        data=item.data,
        value=item.value,
        gas=await _gas(rpc, signer.address, item),
        max_fee_per_gas=max_fee,
        max_priority_fee_per_gas=tip,
    )
    signed = signer.sign_transaction(transaction)
    try:
        await rpc.call("eth_sendRawTransaction", "0x" + signed.raw.hex())
    except ChainRpcError as exc:
        # A retried broadcast the node took the first time.
        if "already known" not in exc.rpc_message.lower():
            raise
    return signed.id


async def wait_for_receipt(
    rpc: JsonRpc, chain_id: int, tx_hash: str, *, interval: float, step_id: str
) -> None:
    """Returns once the transaction is mined and succeeded; `TransactionReverted` if it
    failed. (The caller bounds the wait.)"""
    while True:
        receipt = await rpc.call("eth_getTransactionReceipt", tx_hash)
        if isinstance(receipt, dict):
            if quantity(receipt.get("status")) != 1:
                raise TransactionReverted(chain_id, tx_hash, step_id=step_id)
            return
        await asyncio.sleep(interval)
