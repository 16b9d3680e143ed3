"""A user's wallet on the SVM chain: signs a quote's SVM transaction items, or any
instructions, with solders keypairs and sends them to the node; the node's JSON-RPC as a
wallet reads it (balances, blockhashes, airdrops on the devnet)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import httpx
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from crossfill.kinds.svm import programs


def rpc_reply(url: str, method: str, *params: Any) -> dict[str, Any]:
    """The node's whole answer to one JSON-RPC call, an error included."""
    reply: dict[str, Any] = httpx.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    ).json()
    return reply


def rpc(url: str, method: str, *params: Any) -> Any:
    """The result of one JSON-RPC call, which must not fail."""
    reply = rpc_reply(url, method, *params)
    assert "error" not in reply, reply
    return reply["result"]


def item_instructions(item: dict[str, Any]) -> list[Instruction]:
    """A quote's SVM transaction item as the instructions a wallet signs."""
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


def signed(
    url: str,
    instructions: list[Instruction],
    signers: Sequence[Keypair],
    blockhash: str | None = None,
) -> VersionedTransaction:
    """The instructions in one transaction signed by `signers` (the first pays the fee), on
    `blockhash` or the node's latest."""
    if blockhash is None:
        blockhash = rpc(url, "getLatestBlockhash")["value"]["blockhash"]
    message = Message.new_with_blockhash(
        instructions, signers[0].pubkey(), Hash.from_string(blockhash)
    )
    return VersionedTransaction(message, list(signers))


def encoded(tx: VersionedTransaction) -> str:
    """A transaction as `sendTransaction` takes it (base64)."""
    return base64.b64encode(bytes(tx)).decode()


def sign_and_send(
    url: str,
    instructions: list[Instruction],
    signer: Keypair,
    fee_payer: Keypair | None = None,
) -> VersionedTransaction:
    """Signed by `signer` and, when another account pays the fee, by `fee_payer` too; sent."""
    payer = fee_payer or signer
    tx = signed(url, instructions, [payer] if payer == signer else [payer, signer])
    assert len(bytes(tx)) <= programs.MAX_TRANSACTION_BYTES
    rpc(url, "sendTransaction", encoded(tx), {"encoding": "base64"})
    return tx


def airdrop(url: str, owner: Pubkey, lamports: int) -> None:
    rpc(url, "requestAirdrop", str(owner), lamports)


def sol_balance(url: str, owner: Pubkey) -> int:
    return int(rpc(url, "getBalance", str(owner))["value"])


def token_balance(url: str, owner: Pubkey, mint: Pubkey) -> int:
    """`owner`'s balance of `mint` in its associated token account; 0 without one."""
    account = programs.token_account(owner, mint)
    reply = rpc_reply(url, "getTokenAccountBalance", str(account))
    return int(reply["result"]["value"]["amount"]) if "result" in reply else 0
