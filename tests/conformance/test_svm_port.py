"""The SVM chain port (`kinds.svm.client.SvmPort`) as the SVM workers rely on it, each behaviour
run on the in-memory `FakeSvm` and on `SvmClient` against the devnet's node: what one answers,
the other must."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from crossfill.devnet.svm.accounts import USDC_DECIMALS
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.errors import ChainNotFound, ProgramFailed
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.client import (
    BlockhashNotFound,
    LandedTransaction,
    OwnedTokenAccount,
    SvmClient,
)
from crossfill.kinds.svm.deposits import VaultDeposit, read_vault_deposits
from crossfill.kinds.svm.payer import SETTLED_COMMITMENTS
from crossfill.kinds.svm.transactions import LAMPORTS_PER_SIGNATURE
from crossfill.types import ChainId
from tests.conformance.svm_backends import DevnetSvmDriver, FakeSvmDriver, SvmBackend
from tests.unit.fake_svm import SVM_CHAIN, FakeSvm

SOL = 10**9
ORDER_ID = "0x" + "5e" * 32
# What the System and Token programs answer an overdraft with.
OVERDRAFT = {"InstructionError": [0, {"Custom": 1}]}


@pytest.fixture(params=["fake", "devnet"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[SvmBackend]:
    if request.param == "fake":
        chain = FakeSvm()
        yield SvmBackend(chain, FakeSvmDriver(chain, Keypair().pubkey()))
        return
    node: SvmNodeProcess = request.getfixturevalue("svm_node")
    seeded: SeededSvm = request.getfixturevalue("seeded")
    client = SvmClient(ChainId(SVM_CHAIN), node.rpc_url)
    try:
        yield SvmBackend(client, DevnetSvmDriver(node, seeded))
    finally:
        await client.close()


def _signed(
    instructions: list[Instruction], payer: Keypair, blockhash: Hash
) -> VersionedTransaction:
    message = Message.new_with_blockhash(instructions, payer.pubkey(), blockhash)
    return VersionedTransaction(message, [payer])


async def _transfer(
    backend: SvmBackend, payer: Keypair, to: Pubkey, lamports: int
) -> VersionedTransaction:
    latest = await backend.port.latest_blockhash()
    return _signed([programs.transfer_sol(payer.pubkey(), to, lamports)], payer, latest.blockhash)


async def _funded(backend: SvmBackend, lamports: int) -> Keypair:
    payer = Keypair()
    await backend.driver.airdrop(payer.pubkey(), lamports)
    return payer


def _signatures(listed: list[dict[str, Any]]) -> list[str]:
    return [entry["signature"] for entry in listed]


async def test_the_chain_moves_on_and_stays_the_same_chain(backend: SvmBackend) -> None:
    port = backend.port
    await port.health()
    genesis, height = await port.genesis_hash(), await port.block_height()
    await backend.driver.advance(3)
    assert await port.block_height() >= height + 3
    assert await port.genesis_hash() == genesis != ""


async def test_a_recent_blockhash_is_valid_past_the_current_height(backend: SvmBackend) -> None:
    latest = await backend.port.latest_blockhash()
    assert latest.last_valid_block_height > await backend.port.block_height()


async def test_lamports_and_tokens_are_what_the_account_holds(backend: SvmBackend) -> None:
    port, driver = backend.port, backend.driver
    holder = Keypair().pubkey()
    account = programs.token_account(holder, driver.mint)
    assert (await port.balance(holder), await port.account_exists(holder)) == (0, False)
    assert await port.token_balance(holder, driver.mint) == 0
    assert await port.token_accounts_of(holder) == []
    assert not await port.account_exists(account)
    await driver.airdrop(holder, 2 * SOL)
    await driver.give_tokens(holder, 7_000_000)
    assert (await port.balance(holder), await port.account_exists(holder)) == (2 * SOL, True)
    assert await port.token_balance(holder, driver.mint) == 7_000_000
    assert await port.token_accounts_of(holder) == [OwnedTokenAccount(account, driver.mint)]
    assert await port.account_exists(account)


async def test_a_sent_transfer_lands_listed_and_readable_as_a_deposit(backend: SvmBackend) -> None:
    port, driver = backend.port, backend.driver
    payer, vault = await _funded(backend, 10 * SOL), Keypair().pubkey()
    latest = await port.latest_blockhash()
    pay = [programs.transfer_sol(payer.pubkey(), vault, SOL), programs.memo(ORDER_ID)]
    tx = _signed(pay, payer, latest.blockhash)
    signature = await port.send(tx)
    assert signature == str(tx.signatures[0])
    await driver.advance(2)
    status = await port.signature_status(signature)
    assert status is not None and status.succeeded and status.commitment in SETTLED_COMMITMENTS
    (listed,) = await port.signatures_for(vault, until=None, limit=10)
    assert (listed["signature"], listed["slot"], listed["err"]) == (signature, status.slot, None)
    assert listed["confirmationStatus"] in SETTLED_COMMITMENTS
    payers = await port.signatures_for(payer.pubkey(), until=None, limit=10)
    assert signature in _signatures(payers)
    deposit = VaultDeposit(
        signature, status.slot, listed["blockTime"], str(latest.blockhash),
        str(payer.pubkey()), programs.NATIVE_SOL_ADDRESS, SOL, ORDER_ID,
        fee=LAMPORTS_PER_SIGNATURE,
    )  # fmt: skip
    assert read_vault_deposits(await port.transaction(signature), str(vault)) == [deposit]
    landed = LandedTransaction(status.slot, listed["blockTime"], LAMPORTS_PER_SIGNATURE)
    assert await port.landed_transaction(signature) == landed

    assert await port.send(tx) == signature  # landed already: answered, not landed twice
    assert _signatures(await port.signatures_for(vault, until=None, limit=10)) == [signature]


async def test_a_token_transfer_into_the_vaults_account_reads_as_a_deposit_of_its_mint(
    backend: SvmBackend,
) -> None:
    port, driver = backend.port, backend.driver
    user, vault = await _funded(backend, SOL), Keypair().pubkey()
    await driver.give_tokens(user.pubkey(), 5_000_000)
    latest = await port.latest_blockhash()
    owner, mint = user.pubkey(), driver.mint
    pay = [
        programs.create_token_account(owner, vault, mint),
        programs.transfer_token(owner, vault, mint, 2_000_000, USDC_DECIMALS),
        programs.memo(ORDER_ID),
    ]
    signature = await port.send(_signed(pay, user, latest.blockhash))
    await driver.advance(2)
    (deposit,) = read_vault_deposits(await port.transaction(signature), str(vault))
    assert (deposit.sender, deposit.currency, deposit.amount, deposit.memo) == (
        str(owner),
        str(mint),
        2_000_000,
        ORDER_ID,
    )
    account = programs.token_account(vault, mint)
    assert _signatures(await port.signatures_for(account, until=None, limit=10)) == [signature]


async def test_a_program_refusal_in_preflight_lands_nothing(backend: SvmBackend) -> None:
    port, driver = backend.port, backend.driver
    payer, recipient = await _funded(backend, SOL), Keypair().pubkey()
    tx = await _transfer(backend, payer, recipient, 5 * SOL)
    driver.refuse_next_send()
    with pytest.raises(ProgramFailed) as refused:
        await port.send(tx)
    assert refused.value.err == OVERDRAFT
    await driver.advance(1)
    assert await port.signature_status(str(tx.signatures[0])) is None
    assert await port.signatures_for(recipient, until=None, limit=10) == []
    assert await port.balance(payer.pubkey()) == SOL


async def test_a_refused_transfer_sent_without_preflight_lands_failed(backend: SvmBackend) -> None:
    port, driver = backend.port, backend.driver
    payer, vault = await _funded(backend, SOL), Keypair().pubkey()
    tx = await _transfer(backend, payer, vault, 5 * SOL)
    driver.refuse_next_send()
    signature = await port.send(tx, preflight=False)
    await driver.advance(2)
    status = await port.signature_status(signature)
    assert status is not None and status.err == OVERDRAFT and not status.succeeded
    (listed,) = await port.signatures_for(vault, until=None, limit=10)
    assert (listed["signature"], listed["err"]) == (signature, OVERDRAFT)
    landed = await port.transaction(signature)
    assert landed["meta"]["err"] == OVERDRAFT
    assert read_vault_deposits(landed, str(vault)) == []


async def test_a_blockhash_the_node_does_not_know_is_refused_or_dropped(
    backend: SvmBackend,
) -> None:
    port, driver = backend.port, backend.driver
    payer = await _funded(backend, SOL)
    transfer = programs.transfer_sol(payer.pubkey(), Keypair().pubkey(), SOL // 2)
    tx = _signed([transfer], payer, Hash.new_unique())
    with pytest.raises(BlockhashNotFound):
        await port.send(tx)
    assert await port.send(tx, preflight=False) == str(tx.signatures[0])
    await driver.advance(1)
    assert await port.signature_status(str(tx.signatures[0])) is None


async def test_a_blockhash_expires_past_its_last_valid_height(backend: SvmBackend) -> None:
    port, driver = backend.port, backend.driver
    payer = await _funded(backend, 10 * SOL)
    latest = await port.latest_blockhash()
    landed = _signed([programs.transfer_sol(payer.pubkey(), Keypair().pubkey(), SOL)], payer,
                     latest.blockhash)  # fmt: skip
    await port.send(landed)
    await driver.advance(latest.last_valid_block_height - await port.block_height() + 1)
    assert await port.block_height() > latest.last_valid_block_height
    late = _signed([programs.transfer_sol(payer.pubkey(), Keypair().pubkey(), SOL)], payer,
                   latest.blockhash)  # fmt: skip
    with pytest.raises(BlockhashNotFound):
        await port.send(late)
    assert await port.send(landed) == str(landed.signatures[0])  # landed: still answered


async def test_an_address_lists_its_transactions_newest_first_in_pages(
    backend: SvmBackend,
) -> None:
    port, driver = backend.port, backend.driver
    address, idle = Keypair().pubkey(), Keypair().pubkey()
    # Amounts of their own: the same airdrop twice in one slot would be one transaction.
    first, second, third = [await driver.airdrop(address, SOL + n) for n in range(3)]
    listed = await port.signatures_for(address, until=None, limit=10)
    assert _signatures(listed) == [third, second, first]
    assert _signatures(await port.signatures_for(address, until=first, limit=10)) == [
        third,
        second,
    ]
    before = await port.signatures_for(address, until=None, limit=10, before=third)
    assert _signatures(before) == [second, first]
    assert _signatures(await port.signatures_for(address, until=None, limit=1)) == [third]
    each = await port.signatures_for_each([(address, second), (idle, None)], limit=10)
    assert [_signatures(found) for found in each] == [[third], []]


async def test_what_the_node_never_saw_is_unknown(backend: SvmBackend) -> None:
    unknown = str(Keypair().sign_message(b"never sent"))
    assert await backend.port.signature_status(unknown) is None
    with pytest.raises(ChainNotFound):
        await backend.port.transaction(unknown)
    with pytest.raises(ChainNotFound):
        await backend.port.landed_transaction(unknown)
