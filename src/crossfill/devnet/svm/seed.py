"""Seed the devnet SVM chain through its JSON-RPC: SOL by airdrop, a USDC mint, balances."""

from __future__ import annotations

import base64
from dataclasses import dataclass

from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountParams, create_account
from solders.transaction import VersionedTransaction

from crossfill.devnet import json_rpc
from crossfill.devnet.svm import accounts
from crossfill.kinds.svm import programs

SOL_PER_HOLDER = 500 * 10**9
USDC_PER_HOLDER = 1_000_000 * 10**accounts.USDC_DECIMALS


@dataclass(frozen=True)
class SeededSvm:
    usdc_mint: Pubkey
    solver: Pubkey
    users: tuple[Pubkey, ...]


def send(rpc_url: str, instructions: list[Instruction], signers: list[Keypair]) -> str:
    """Sign with a fresh blockhash (the first signer pays) and land it; returns the signature."""
    latest = json_rpc.call(rpc_url, "getLatestBlockhash", [])
    assert isinstance(latest, dict)
    blockhash = latest["value"]["blockhash"]
    message = Message.new_with_blockhash(
        instructions, signers[0].pubkey(), Hash.from_string(blockhash)
    )
    tx = VersionedTransaction(message, signers)
    encoded = base64.b64encode(bytes(tx)).decode()
    signature = json_rpc.call(rpc_url, "sendTransaction", [encoded, {"encoding": "base64"}])
    assert isinstance(signature, str)
    return signature


def seed_svm(rpc_url: str) -> SeededSvm:
    authority, mint = accounts.mint_authority(), accounts.usdc_mint()
    holders = [accounts.solver().pubkey(), *(user.pubkey() for user in accounts.users())]
    for holder in (authority.pubkey(), *holders):
        json_rpc.call(rpc_url, "requestAirdrop", [str(holder), SOL_PER_HOLDER])
    rent = json_rpc.call(rpc_url, "getMinimumBalanceForRentExemption", [programs.MINT_ACCOUNT_SIZE])
    assert isinstance(rent, int)
    create_mint = create_account(
        CreateAccountParams(
            from_pubkey=authority.pubkey(),
            to_pubkey=mint.pubkey(),
            lamports=rent,
            space=programs.MINT_ACCOUNT_SIZE,
            owner=programs.TOKEN_PROGRAM_ID,
        )
    )
    init = programs.initialize_mint(mint.pubkey(), accounts.USDC_DECIMALS, authority.pubkey())
    send(rpc_url, [create_mint, init], [authority, mint])
    for holder in holders:
        send(
            rpc_url,
            [
                programs.create_token_account(authority.pubkey(), holder, mint.pubkey()),
                programs.mint_to(
                    mint.pubkey(),
                    programs.token_account(holder, mint.pubkey()),
                    authority.pubkey(),
                    USDC_PER_HOLDER,
                ),
            ],
            [authority],
        )
    return SeededSvm(mint.pubkey(), holders[0], tuple(holders[1:]))
