"""The client alone, into and out of the perps exchange (chain 1337): a deposit from an EVM
chain credited on the exchange, and a withdrawal whose two steps (the nonce mapping signed
and posted to the service, the exchange's `sendAsset` signed and posted to the exchange)
arrive on the EVM chain."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount

from client_devnet import (
    DESTINATION,
    ORIGIN,
    PERPS_CHAIN,
    PERPS_USDC,
    bridge,
    evm_balance,
    funded_user,
    rpc_url,
    usdc,
    withdrawable,
)
from crossfill.config import Deployment
from crossfill.devnet.exchange.process import ExchangeProcess, fund
from crossfill_client import Client, RequestStatus, Signer
from crossfill_client.progress import ExchangeActionPosted, ProgressEvent, SignaturePosted
from crossfill_client.signing import EvmWallet
from tests.support.devnets import RunningDevnet, with_exchange
from tests.support.service import ServiceThread


@pytest.fixture(scope="module")
def deployment(devnet: RunningDevnet, exchange: ExchangeProcess) -> Deployment:
    return with_exchange(devnet.deployment, exchange)


@pytest.fixture(scope="module")
def client(service: ServiceThread) -> Iterator[Client]:
    with Client(service.base_url) as client:
        yield client


@pytest.fixture(scope="module")
def rpc_urls(devnet: RunningDevnet, exchange: ExchangeProcess) -> dict[int, str]:
    return {ORIGIN: rpc_url(devnet, ORIGIN), DESTINATION: rpc_url(devnet, DESTINATION),
            PERPS_CHAIN: exchange.api_url}  # fmt: skip


def test_usdc_deposit_is_credited_on_the_exchange(
    devnet: RunningDevnet, exchange: ExchangeProcess, client: Client, rpc_urls: dict[int, str]
) -> None:
    user, recipient = funded_user(devnet, usdc_units=50 * 10**6), Account.create().address
    currencies = (usdc(devnet, ORIGIN), PERPS_USDC)
    quote = client.quote(
        bridge(user.address, (ORIGIN, PERPS_CHAIN), currencies, 20 * 10**6, recipient=recipient)
    )

    result = client.execute(quote, Signer(evm=EvmWallet(user)), rpc_urls=rpc_urls)

    assert result.status is not None and result.status.status is RequestStatus.SUCCESS
    credited = Decimal(quote.details.currency_out.amount) / 10**6
    assert withdrawable(exchange.api_url, recipient) == credited > 0


def _funded_on_exchange(exchange: ExchangeProcess, usd: str) -> LocalAccount:
    user: LocalAccount = Account.create()
    fund(exchange.api_url, user.address, usd)
    return user


def test_withdrawal_signs_the_mapping_and_the_exchange_transfer(
    devnet: RunningDevnet, exchange: ExchangeProcess, client: Client, rpc_urls: dict[int, str]
) -> None:
    user = _funded_on_exchange(exchange, "100")
    token = usdc(devnet, DESTINATION)
    route, currencies = (PERPS_CHAIN, DESTINATION), (PERPS_USDC, token)
    quote = client.quote(bridge(user.address, route, currencies, 25 * 10**6, protocol_version="v2"))
    assert [step.id for step in quote.steps] == ["authorize", "deposit"]
    events: list[ProgressEvent] = []

    result = client.execute(
        quote, Signer(evm=EvmWallet(user)), rpc_urls=rpc_urls, on_progress=events.append
    )

    assert result.status is not None and result.status.status is RequestStatus.SUCCESS
    assert (
        evm_balance(devnet, DESTINATION, token, user.address) == quote.details.currency_out.amount
    )
    assert withdrawable(exchange.api_url, user.address) == Decimal(75)
    posted = [
        event for event in events if isinstance(event, SignaturePosted | ExchangeActionPosted)
    ]
    assert [type(event) for event in posted] == [SignaturePosted, ExchangeActionPosted]
    assert result.transactions == ()  # no chain transaction of the user's own
