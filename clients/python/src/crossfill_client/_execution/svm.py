"""A transaction item on an SVM chain: its instructions compiled and signed by the wallet on
the node's latest blockhash, sent, and followed until confirmed."""

from __future__ import annotations

import asyncio
import base64

from crossfill_client._rpc import JsonRpc
from crossfill_client.errors import ExecutionError, TransactionReverted
from crossfill_client.models.quote import SvmTransactionData
from crossfill_client.signers import SvmSigner, SvmTransaction

_LANDED = ("confirmed", "finalized")


async def send_svm_transaction(
    rpc: JsonRpc, signer: SvmSigner, item: SvmTransactionData, *, step_id: str
) -> str:
    """Sign and send the item's instructions; the transaction's signature (base58)."""
    if item.address_lookup_table_addresses:
        raise ExecutionError("address lookup tables are not supported", step_id=step_id)
    latest = await rpc.call("getLatestBlockhash", {"commitment": "confirmed"})
    value = latest.get("value") if isinstance(latest, dict) else None
    blockhash = value.get("blockhash") if isinstance(value, dict) else None
    if not isinstance(blockhash, str):
        raise ExecutionError(f"no blockhash in {latest!r}", step_id=step_id)
    signed = signer.sign_transaction(
        SvmTransaction(
            instructions=item.instructions,
            recent_blockhash=blockhash,
            fee_payer=item.fee_payer or signer.public_key,
        )
    )
    encoded = base64.b64encode(signed.raw).decode()
    await rpc.call("sendTransaction", encoded, {"encoding": "base64"})
    return signed.id


async def wait_for_signature(
    rpc: JsonRpc, chain_id: int, signature: str, *, interval: float, step_id: str
) -> None:
    """Returns once the transaction is confirmed without error; `TransactionReverted` if it
    landed with one. (The caller bounds the wait.)"""
    while True:
        answer = await rpc.call("getSignatureStatuses", [signature])
        value = answer.get("value") if isinstance(answer, dict) else None
        status = value[0] if isinstance(value, list) and value else None
        if isinstance(status, dict):
            if status.get("err") is not None:
                raise TransactionReverted(chain_id, signature, step_id=step_id)
            if status.get("confirmationStatus") in _LANDED:
                return
        await asyncio.sleep(interval)
