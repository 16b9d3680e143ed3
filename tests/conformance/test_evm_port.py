"""The EVM chain port (`kinds.evm.port.EvmPort`) as the workers rely on it, each behaviour run
on the in-memory `FakeChain` and on `EvmClient` against anvil: what one answers, the other
must."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from eth_abi.abi import encode
from eth_utils.crypto import keccak
from hexbytes import HexBytes
from web3 import Web3

from crossfill.contracts.abi import ERC20, function
from crossfill.contracts.events import decode_events
from crossfill.contracts.reverts import RevertReason
from crossfill.errors import (
    AlreadyKnown,
    CannotPayGas,
    ChainError,
    NodeBehind,
    NonceTooLow,
    Reverted,
    SendRefused,
)
from crossfill.kinds.evm import receipt_outcomes
from crossfill.kinds.evm.client import (
    CallOutcome,
    EvmClient,
    LogFilter,
    TransactionFacts,
    ValueTransfer,
)
from crossfill.kinds.evm.depository_logs import (
    TokenTransfer,
    address_topic,
    decode_transfer,
    erc20_transfer_event,
)
from crossfill.metrics import Metrics
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId, TraceApi
from tests.conformance.evm_backends import (
    CHAIN_ID,
    MAX_FEE_PER_GAS,
    PRIORITY_FEE_PER_GAS,
    AnvilChain,
    AnvilDriver,
    EvmBackend,
    FakeChainDriver,
    new_address,
    signed,
    start_anvil_chain,
)
from tests.unit.fake_chain import FakeChain

ETHER = 10**18
# `Error("no such order")`, as Solidity encodes a require's message.
REFUSAL = keccak(text="Error(string)")[:4] + encode(["string"], ["no such order"])


@pytest.fixture(scope="module")
def anvil_chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AnvilChain]:
    yield from start_anvil_chain(tmp_path_factory.mktemp("anvil"))


@pytest.fixture(params=["fake", "anvil"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[EvmBackend]:
    if request.param == "fake":
        chain = FakeChain(ChainId(CHAIN_ID))
        yield EvmBackend(chain, FakeChainDriver(chain))
        return
    anvil: AnvilChain = request.getfixturevalue("anvil_chain")
    client = EvmClient(
        ChainId(CHAIN_ID), anvil.anvil.rpc_url, timeout_seconds=10, metrics=Metrics()
    )
    try:
        yield EvmBackend(client, AnvilDriver(anvil))
    finally:
        await client.close()


def _transfer(to: str, units: int) -> bytes:
    return function(ERC20, "transfer").encode(to, units)


async def test_the_head_is_a_block_linked_to_the_one_below(backend: EvmBackend) -> None:
    port = backend.port
    await backend.driver.mine()
    head = await port.head()
    assert await port.block_at(head.number) == head
    parent = await port.block_at(head.number - 1)
    assert parent is not None and head.parent_hash == parent.hash
    await port.check_identity()


async def test_a_mined_block_becomes_the_head_on_top_of_the_last(backend: EvmBackend) -> None:
    port = backend.port
    before = await port.head()
    await backend.driver.mine()
    after = await port.head()
    assert after.number == before.number + 1 and after.parent_hash == before.hash
    assert after.timestamp >= before.timestamp
    assert await port.block_at(before.number) == before


async def test_no_block_is_served_above_the_head(backend: EvmBackend) -> None:
    port = backend.port
    head = await port.head()
    with pytest.raises(ChainError):
        await port.block_at(head.number + 1)
    any_log = LogFilter((backend.driver.token,), ())
    with pytest.raises(NodeBehind):
        await port.scan([any_log], head.number, head.number + 1)


async def test_balances_of_ether_and_of_a_token(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    holder, spender = await driver.funded(ETHER), new_address()
    await driver.give_tokens(holder.address, 5_000_000)
    polled = await port.poll(holder.address, [driver.token], [])
    assert polled.head == await port.head()
    assert (polled.native_balance, polled.token_balances) == (ETHER, [5_000_000])
    native = await port.balance_and_allowance(NATIVE_EVM_ADDRESS, holder.address, spender)
    assert native == (ETHER, None)
    assert await port.balance_and_allowance(driver.token, holder.address, spender) == (5_000_000, 0)
    nobody = new_address()
    assert await port.balance_and_allowance(NATIVE_EVM_ADDRESS, nobody, spender) == (0, None)
    assert await port.balance_and_allowance(driver.token, nobody, spender) == (0, 0)
    head = await port.head()
    assert await port.native_balances([holder.address, nobody], head.number) == [ETHER, 0]
    assert await port.native_balances([], head.number) == []


async def test_a_read_only_call_answers_what_the_contract_returns(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    holder = await driver.funded(ETHER)
    await driver.give_tokens(holder.address, 7_000)
    returned = await port.call(driver.token, function(ERC20, "balanceOf").encode(holder.address))
    assert function(ERC20, "balanceOf").decode_output(returned) == (7_000,)
    # An account without code runs nothing and answers nothing.
    assert (
        await port.call(new_address(), function(ERC20, "balanceOf").encode(holder.address)) == b""
    )


async def test_an_approval_mined_is_the_spenders_allowance(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    holder, spender = await driver.funded(ETHER), new_address()
    await driver.give_tokens(holder.address, 100)
    approve = function(ERC20, "approve").encode(spender, 70)
    tx_hash = await driver.submit(signed(holder, nonce=0, to=driver.token, data=approve))
    await driver.mine()
    receipt = await port.receipt(tx_hash)
    assert receipt is not None and receipt["status"] == 1
    assert await port.balance_and_allowance(driver.token, holder.address, spender) == (100, 70)
    assert await port.code(driver.token) != b""
    assert await port.code(spender) == b""


async def test_a_sent_transfer_waits_until_a_block_mines_it(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    sender, recipient = await driver.funded(ETHER), new_address()
    account = sender.address.lower()
    raw = signed(sender, nonce=0, to=recipient, value=12_345, gas=21_000)
    tx_hash = await port.send_raw(raw)
    assert tx_hash == "0x" + keccak(raw).hex()
    assert (await port.pending_nonce(account), await port.mined_nonce(account)) == (1, 0)
    assert await port.transaction_sender(tx_hash) == (account, 0)
    facts = TransactionFacts(account, recipient, 12_345, b"")
    assert await port.sent_transaction(tx_hash) == facts
    assert await port.receipt(tx_hash) is None and await port.fee_paid(tx_hash) is None

    await driver.mine()
    head = await port.head()
    receipt = await port.receipt(tx_hash)
    assert receipt is not None and receipt["status"] == 1
    assert int(receipt["blockNumber"]) == head.number
    assert HexBytes(receipt["blockHash"]).to_0x_hex() == head.hash
    fee = await port.fee_paid(tx_hash)
    assert fee == receipt_outcomes.fee_paid(receipt) and fee > 0
    assert await port.fees_paid([tx_hash, "0x" + "ab" * 32]) == [fee, None]
    assert (await port.pending_nonce(account), await port.mined_nonce(account)) == (1, 1)
    assert await port.transaction_sender(tx_hash) == (account, 0)
    assert await port.sent_transaction(tx_hash) == facts
    data, to = await port.transaction_input(tx_hash)
    assert (data, to.lower()) == (b"", recipient)
    spent = await port.balance_and_allowance(NATIVE_EVM_ADDRESS, account, recipient)
    assert spent == (ETHER - 12_345 - fee, None)
    paid = await port.balance_and_allowance(NATIVE_EVM_ADDRESS, recipient, account)
    assert paid == (12_345, None)
    paying = ValueTransfer(tx_hash, account, recipient, 12_345, head)
    assert await port.value_transfers(head.number, frozenset({recipient})) == [paying]
    assert await port.value_transfers(head.number, frozenset({new_address()})) == []


async def test_a_transaction_the_node_never_saw_is_unknown(backend: EvmBackend) -> None:
    port, unknown = backend.port, "0x" + "ab" * 32
    assert await port.receipt(unknown) is None
    assert await port.fee_paid(unknown) is None
    assert await port.transaction_sender(unknown) is None
    assert await port.sent_transaction(unknown) is None


async def test_the_same_transaction_sent_again_is_already_known(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    sender = await driver.funded(ETHER)
    raw = signed(sender, nonce=0, to=new_address(), value=1)
    await port.send_raw(raw)
    with pytest.raises(AlreadyKnown):
        await port.send_raw(raw)
    await driver.mine()


async def test_a_nonce_mined_already_is_too_low(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    sender = await driver.funded(ETHER)
    raw = signed(sender, nonce=0, to=new_address(), value=1)
    await port.send_raw(raw)
    await driver.mine()
    with pytest.raises(NonceTooLow):
        await port.send_raw(raw)
    with pytest.raises(NonceTooLow):
        await port.send_raw(signed(sender, nonce=0, to=new_address(), value=2))


async def test_transactions_sent_together_are_each_answered(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    sender = await driver.funded(ETHER)
    account = sender.address.lower()
    raws = [signed(sender, nonce=nonce, to=new_address(), value=1) for nonce in range(3)]
    await port.send_raw(raws[0])
    answers = await port.send_raw_batch(raws)
    assert isinstance(answers[0], AlreadyKnown)
    assert answers[1:] == ["0x" + keccak(raw).hex() for raw in raws[1:]]
    assert await port.pending_nonce(account) == 3
    await driver.mine()
    assert await port.mined_nonce(account) == 3
    (too_low,) = await port.send_raw_batch([raws[2]])
    assert isinstance(too_low, NonceTooLow)


async def test_a_sender_who_cannot_pay_the_gas_is_refused(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    poor = await driver.funded(21_000 * MAX_FEE_PER_GAS - 1)
    with pytest.raises(CannotPayGas):
        await port.send_raw(signed(poor, nonce=0, to=new_address(), gas=21_000))
    assert await port.pending_nonce(poor.address) == 0


async def test_a_replacement_must_pay_more_and_only_it_is_mined(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    sender, recipient = await driver.funded(ETHER), new_address()
    account = sender.address.lower()
    first = await port.send_raw(signed(sender, nonce=0, to=recipient, value=1))
    with pytest.raises(SendRefused) as refused:
        await port.send_raw(signed(sender, nonce=0, to=recipient, value=2))
    assert type(refused.value) is SendRefused  # none of the refusals the journal acts on
    raw = signed(
        sender, nonce=0, to=recipient, value=3, max_fee=2 * MAX_FEE_PER_GAS,
        tip=2 * PRIORITY_FEE_PER_GAS,
    )  # fmt: skip
    replacement = await port.send_raw(raw)
    assert await port.pending_nonce(account) == 1
    await driver.mine()
    mined = await port.receipt(replacement)
    assert mined is not None and mined["status"] == 1
    assert await port.receipt(first) is None
    assert await port.balance_and_allowance(NATIVE_EVM_ADDRESS, recipient, account) == (3, None)


async def test_a_call_the_contract_refuses_is_reverted(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    sender, refuser = new_address(), await driver.refusing_contract(REFUSAL)
    with pytest.raises(Reverted) as reverted:
        await port.estimate_call(sender, refuser, "0x", 0)
    assert reverted.value.data == REFUSAL
    assert reverted.value.reason == RevertReason("Error", ("no such order",))
    with pytest.raises(Reverted) as estimated:
        await port.estimate_gas({"from": _checksum(sender), "to": _checksum(refuser), "data": "0x"})
    assert estimated.value.reason == reverted.value.reason
    call = {"from": sender, "to": refuser, "data": "0x", "value": "0x0"}
    assert await port.simulate(call) == CallOutcome(False, REFUSAL, [])
    plain = {"from": sender, "to": new_address(), "data": "0x", "value": "0x0"}
    assert (await port.simulate(plain)).succeeded


async def test_a_mined_call_that_reverts_pays_its_fee_and_moves_nothing(
    backend: EvmBackend,
) -> None:
    port, driver = backend.port, backend.driver
    sender, refuser = await driver.funded(ETHER), await driver.refusing_contract(REFUSAL)
    account = sender.address.lower()
    tx_hash = await port.send_raw(signed(sender, nonce=0, to=refuser, value=500))
    await driver.mine()
    head = await port.head()
    receipt = await port.receipt(tx_hash)
    assert receipt is not None and receipt["status"] == 0 and list(receipt["logs"]) == []
    fee = receipt_outcomes.fee_paid(receipt)
    assert await port.mined_nonce(account) == 1
    spent = await port.balance_and_allowance(NATIVE_EVM_ADDRESS, account, refuser)
    assert spent == (ETHER - fee, None)
    assert await port.value_transfers(head.number, frozenset({refuser})) == []


async def test_token_transfers_are_found_by_filter_in_their_blocks(backend: EvmBackend) -> None:
    port, driver = backend.port, backend.driver
    holder, recipient, other = await driver.funded(ETHER), new_address(), new_address()
    account, token = holder.address.lower(), driver.token
    await driver.give_tokens(account, 1_000)
    first = await driver.submit(signed(holder, nonce=0, to=token, data=_transfer(recipient, 300)))
    await driver.mine()
    first_block = await port.head()
    await driver.mine()
    second = await driver.submit(signed(holder, nonce=1, to=token, data=_transfer(other, 200)))
    await driver.mine()
    last_block = await port.head()

    to_recipient = LogFilter(
        (token,), (erc20_transfer_event().topic, None, [address_topic(recipient)])
    )
    any_transfer = LogFilter((token,), (erc20_transfer_event().topic,))
    elsewhere = LogFilter((new_address(),), ())
    scanned = await port.scan(
        [to_recipient, any_transfer, elsewhere], first_block.number, last_block.number
    )
    assert scanned.end_block == last_block
    paid = TokenTransfer(
        token, account, recipient, 300, first, 0, first_block.number, first_block.hash
    )
    paid_other = TokenTransfer(
        token, account, other, 200, second, 0, last_block.number, last_block.hash
    )
    found = [[decode_transfer(entry) for entry in logs] for logs in scanned.logs]
    assert found == [[paid], [paid, paid_other], []]
    between = await port.scan([any_transfer], first_block.number + 1, last_block.number - 1)
    assert between.logs == [[]]

    receipt = await port.receipt(first)
    assert receipt is not None
    (logged,) = decode_events(receipt["logs"], ERC20, "Transfer")
    assert (logged.address, logged.args["value"]) == (token, 300)
    assert str(logged.args["to"]).lower() == recipient
    assert await port.balance_and_allowance(token, recipient, account) == (300, 0)
    assert await port.balance_and_allowance(token, account, recipient) == (500, 0)


async def test_a_token_transfer_beyond_the_balance_fails_and_logs_nothing(
    backend: EvmBackend,
) -> None:
    port, driver = backend.port, backend.driver
    holder, recipient = await driver.funded(ETHER), new_address()
    await driver.give_tokens(holder.address, 10)
    tx_hash = await driver.submit(
        signed(holder, nonce=0, to=driver.token, data=_transfer(recipient, 11))
    )
    await driver.mine()
    head = await port.head()
    receipt = await port.receipt(tx_hash)
    assert receipt is not None and receipt["status"] == 0
    scanned = await port.scan([LogFilter((driver.token,), ())], head.number, head.number)
    assert scanned.logs == [[]]
    assert await port.balance_and_allowance(driver.token, holder.address, recipient) == (10, 0)


@pytest.mark.parametrize("traces", list(TraceApi))
async def test_ether_a_contract_pays_in_an_internal_call_is_traced(
    backend: EvmBackend, traces: TraceApi
) -> None:
    port, driver = backend.port, backend.driver
    await port.check_traces(traces)
    payee = await driver.funded(ETHER)
    paid = await driver.pay_internally(payee, 7_777)
    number, to = paid.block_number, frozenset({payee.address.lower()})
    block = await port.block_at(number)
    assert block is not None and paid.block_hash == block.hash
    traced = await port.internal_transfers(number, number, to, traces)
    assert (traced.paid, traced.untraced) == ([paid], [])
    assert (
        await port.internal_transfers(number, number, frozenset({new_address()}), traces)
    ).paid == []
    assert (await port.internal_transfers(number - 1, number - 1, to, traces)).paid == []


def _checksum(address: str) -> str:
    return str(Web3.to_checksum_address(address))
