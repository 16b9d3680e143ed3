"""The client alone against the devnet service: bridges between the EVM chains (native, a
token with its approval, through a deposit address), each followed to success and its output
found on the destination chain; the request listing's pages; typed refusals."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from eth_account import Account

from client_devnet import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    bridge,
    evm_balance,
    funded_user,
    new_api_key,
    rpc_url,
    usdc,
)
from crossfill_client import (
    Client,
    QuoteError,
    RequestFilters,
    RequestStatus,
    Signer,
    WaitOptions,
)
from crossfill_client.progress import (
    ProgressEvent,
    StatusChanged,
    StepCompleted,
    StepStarted,
    TransactionConfirmed,
    TransactionSubmitted,
)
from crossfill_client.signing import EvmWallet
from tests.support.devnets import RunningDevnet
from tests.support.service import ServiceThread

EVM_ROUTE = (ORIGIN, DESTINATION)
ETH = (NATIVE, NATIVE)


@pytest.fixture(scope="module")
def client(service: ServiceThread) -> Iterator[Client]:
    with Client(service.base_url) as client:
        yield client


@pytest.fixture(scope="module")
def rpc_urls(devnet: RunningDevnet) -> dict[int, str]:
    return {chain_id: rpc_url(devnet, chain_id) for chain_id in (ORIGIN, DESTINATION)}


def test_native_bridge_lands_on_the_destination_and_reports_each_stage(
    devnet: RunningDevnet, client: Client, rpc_urls: dict[int, str]
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    quote = client.quote(bridge(user.address, EVM_ROUTE, ETH, 10**17, recipient=recipient))
    events: list[ProgressEvent] = []

    result = client.execute(quote, Signer(evm=EvmWallet(user)), rpc_urls=rpc_urls,
                            on_progress=events.append)  # fmt: skip

    assert result.status is not None and result.status.status is RequestStatus.SUCCESS
    assert evm_balance(devnet, DESTINATION, NATIVE, recipient) == quote.details.currency_out.amount
    (deposit,) = result.transactions
    assert deposit.chain_id == ORIGIN and result.status.in_tx_hashes == (deposit.tx_id,)
    kinds = [type(event) for event in events]
    assert kinds[:3] == [StepStarted, TransactionSubmitted, TransactionConfirmed]
    assert kinds[-1] is StepCompleted
    statuses = [event.record.status for event in events if isinstance(event, StatusChanged)]
    assert statuses[-1] is RequestStatus.SUCCESS
    # Once ended, both ways of waiting answer the same final record at once.
    for use_websocket in (True, False):
        options = WaitOptions(timeout=5, use_websocket=use_websocket)
        assert client.wait(quote.request_id, options) == client.status(quote.request_id)


def test_token_bridge_approves_then_deposits(
    devnet: RunningDevnet, client: Client, rpc_urls: dict[int, str]
) -> None:
    user, recipient = funded_user(devnet, usdc_units=50 * 10**6), Account.create().address
    token_in, token_out = usdc(devnet, ORIGIN), usdc(devnet, DESTINATION)
    quote = client.quote(
        bridge(user.address, EVM_ROUTE, (token_in, token_out), 20 * 10**6, recipient=recipient)
    )
    assert [step.id for step in quote.steps] == ["approve", "deposit"]

    result = client.execute(quote, Signer(evm=EvmWallet(user)), rpc_urls=rpc_urls)

    assert [sent.step_id for sent in result.transactions] == ["approve", "deposit"]
    assert result.status is not None and result.status.status is RequestStatus.SUCCESS
    assert (
        evm_balance(devnet, DESTINATION, token_out, recipient) == quote.details.currency_out.amount
    )
    assert evm_balance(devnet, ORIGIN, token_in, user.address) == 30 * 10**6
    attested = client.attestation(quote.request_id).request_data
    assert (attested.origin_amount, attested.destination_chain_id) == (20 * 10**6, DESTINATION)


def test_deposit_address_bridge_is_paid_by_a_plain_transfer(
    devnet: RunningDevnet, client: Client, rpc_urls: dict[int, str]
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    quote = client.quote(
        bridge(user.address, EVM_ROUTE, ETH, 10**17, recipient=recipient, use_deposit_address=True)
    )
    address = quote.deposit_address
    assert address is not None

    result = client.execute(quote, Signer(evm=EvmWallet(user)), rpc_urls=rpc_urls)

    assert result.status is not None and result.status.status is RequestStatus.SUCCESS
    assert evm_balance(devnet, DESTINATION, NATIVE, recipient) == quote.details.currency_out.amount
    assert evm_balance(devnet, ORIGIN, NATIVE, address) == 0  # swept into the Depository


def test_requests_walks_every_page_of_the_listing(
    devnet: RunningDevnet, service: ServiceThread, rpc_urls: dict[int, str]
) -> None:
    user = funded_user(devnet)
    with Client(service.base_url, api_key=new_api_key(service.base_url, "pages")) as client:
        request_ids = {
            client.quote(bridge(user.address, EVM_ROUTE, ETH, 10**16 + n)).request_id
            for n in range(3)
        }
        listed = list(client.requests(RequestFilters(user=user.address, limit=2)))
        first_page = client.request_page(RequestFilters(user=user.address, limit=2))

    assert {record.id for record in listed} == request_ids
    assert len(listed) == 3  # two pages, nothing twice
    assert len(first_page.requests) == 2 and first_page.continuation is not None
    assert all(record.status is RequestStatus.WAITING for record in listed)


def test_refused_quote_is_a_typed_quote_error(client: Client) -> None:
    with pytest.raises(QuoteError) as refused:
        client.quote(bridge(Account.create().address, (ORIGIN, 999), ETH, 10**16))
    assert refused.value.status_code == 400
    assert refused.value.error_code == "UNSUPPORTED_CHAIN"


def test_chains_are_typed(client: Client, rpc_urls: dict[int, str]) -> None:
    chains = {chain.id: chain for chain in client.chains()}
    assert {ORIGIN, DESTINATION} <= set(chains)
    assert chains[ORIGIN].vm_type == "evm" and not chains[ORIGIN].disabled
    assert client.rpc_urls()[ORIGIN] == rpc_urls[ORIGIN]
