"""An SVM wallet for the tests: sign a quote's SVM transaction items, or any instructions,
with a solders keypair, and send them to the devnet node."""

from __future__ import annotations

import base64
from typing import Any

import httpx
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from crossfill.kinds.svm import programs


def _rpc(rpc_url: str, method: str, *params: Any) -> Any:
    reply = httpx.post(
        rpc_url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    ).json()
    assert "error" not in reply, reply
    return reply["result"]


def item_instructions(item: dict[str, Any]) -> list[Instruction]:
    return [
        Instruction(
            Pubkey.from_string(wire["programId"]),
            bytes.fromhex(wire["data"]),
            [
                AccountMeta(Pubkey.from_string(k["pubkey"]), k["isSigner"], k["isWritable"])
                for k in wire["keys"]
            ],
        )
        for wire in item["data"]["instructions"]
    ]


def sign_and_send(
    rpc_url: str,
    instructions: list[Instruction],
    signer: Keypair,
    fee_payer: Keypair | None = None,
) -> VersionedTransaction:
    """Signed by `signer` and, when another account pays the fee, by `fee_payer` too."""
    payer = fee_payer or signer
    blockhash = _rpc(rpc_url, "getLatestBlockhash")["value"]["blockhash"]
    message = Message.new_with_blockhash(instructions, payer.pubkey(), Hash.from_string(blockhash))
    tx = VersionedTransaction(message, [payer] if payer == signer else [payer, signer])
    assert len(bytes(tx)) <= programs.MAX_TRANSACTION_BYTES
    _rpc(rpc_url, "sendTransaction", base64.b64encode(bytes(tx)).decode(), {"encoding": "base64"})
    return tx


def airdrop(rpc_url: str, owner: Pubkey, lamports: int) -> None:
    _rpc(rpc_url, "requestAirdrop", str(owner), lamports)


def sol_balance(rpc_url: str, owner: Pubkey) -> int:
    return int(_rpc(rpc_url, "getBalance", str(owner))["value"])


def token_balance(rpc_url: str, owner: Pubkey, mint: Pubkey) -> int:
    account = programs.token_account(owner, mint)
    reply = httpx.post(
        rpc_url,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "getTokenAccountBalance",
            "params": [str(account)],
        },
    ).json()
    return int(reply["result"]["value"]["amount"]) if "result" in reply else 0
