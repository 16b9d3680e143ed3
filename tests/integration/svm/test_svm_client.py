"""The SVM chain port's client against the devnet node: reads, a send, a program's refusal."""

from __future__ import annotations

import pytest
from solders.keypair import Keypair
from solders.message import Message
from solders.transaction import VersionedTransaction

from crossfill.devnet.svm import accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import USDC_PER_HOLDER, SeededSvm
from crossfill.errors import ProgramFailed
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.client import OwnedTokenAccount, SvmClient
from crossfill.types import ChainId


async def test_client_reads_sends_and_reports_a_program_failure(
    svm_node: SvmNodeProcess, seeded: SeededSvm
) -> None:
    client = SvmClient(ChainId(792703809), svm_node.rpc_url)
    try:
        solver, stranger = accounts.solver(), Keypair()
        assert await client.token_balance(solver.pubkey(), seeded.usdc_mint) == USDC_PER_HOLDER
        assert await client.token_balance(stranger.pubkey(), seeded.usdc_mint) == 0
        usdc_account = programs.token_account(solver.pubkey(), seeded.usdc_mint)
        assert await client.token_accounts_of(solver.pubkey()) == [
            OwnedTokenAccount(usdc_account, seeded.usdc_mint)
        ]
        latest = await client.latest_blockhash()
        assert latest.last_valid_block_height > await client.block_height()

        pay = programs.transfer_sol(solver.pubkey(), stranger.pubkey(), 10**9)
        message = Message.new_with_blockhash([pay], solver.pubkey(), latest.blockhash)
        signature = await client.send(VersionedTransaction(message, [solver]))
        status = await client.signature_status(signature)
        assert status is not None and status.succeeded
        assert await client.balance(stranger.pubkey()) == 10**9
        landed = await client.transaction(signature)
        assert landed["meta"]["err"] is None

        overdraw = programs.transfer_sol(stranger.pubkey(), solver.pubkey(), 10**12)
        message = Message.new_with_blockhash([overdraw], stranger.pubkey(), latest.blockhash)
        with pytest.raises(ProgramFailed) as refused:
            await client.send(VersionedTransaction(message, [stranger]))
        assert refused.value.err == {"InstructionError": [0, {"Custom": 1}]}
    finally:
        await client.close()
