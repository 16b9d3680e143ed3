"""The perps exchange port (`kinds.perps.client.PerpsPort`) as the perps workers rely on it, each
behaviour run on the in-memory `FakeExchange` and on `PerpsClient` against the devnet
exchange: what one answers, the other must."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount

from crossfill.devnet.exchange.deployment import DEVNET_EXCHANGE_CHAIN, DEVNET_SIGNATURE_CHAIN_ID
from crossfill.devnet.exchange.tokens import PERPS_DEX, SPOT_DEX, SPOT_TOKENS, USDC
from crossfill.errors import ActionRefused
from crossfill.kinds.perps.actions import (
    SendAsset,
    SignedAction,
    SpotSend,
    UsdSend,
    sign_action,
)
from crossfill.kinds.perps.client import (
    ActionAccepted,
    ClearinghouseState,
    LedgerUpdate,
    PerpsClient,
    SpotBalance,
    SpotTokenMeta,
    Transfer,
)
from crossfill.kinds.perps.nonces import PAST_WINDOW_MS
from crossfill.types import ChainId, ExchangeChain
from tests.conformance.perps_backends import (
    DevnetExchangeDriver,
    ExchangeBackend,
    FakeExchangeDriver,
)
from tests.integration.perps.conftest import DevnetExchange
from tests.unit.fake_exchange import FakeExchange
from tests.unit.worker_world import START, Clock

HYPE = SPOT_TOKENS[1]
SIGNATURE_CHAIN = int(DEVNET_SIGNATURE_CHAIN_ID, 16)


@pytest.fixture(params=["fake", "devnet"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ExchangeBackend]:
    if request.param == "fake":
        clock = Clock()
        fake = FakeExchange(tmp_path / "fake-exchange.sqlite3", clock)
        try:
            yield ExchangeBackend(fake, FakeExchangeDriver(fake, clock))
        finally:
            await fake.close()
        return
    exchange: DevnetExchange = request.getfixturevalue("exchange")
    exchange.clock.now_ms = int(START.timestamp() * 1000)
    api_url = str(exchange.http.base_url)
    client = PerpsClient(ChainId(1337), api_url)
    try:
        yield ExchangeBackend(client, DevnetExchangeDriver(exchange, api_url))
    finally:
        await client.close()


def _usd_send(
    signer: LocalAccount, destination: str, amount: str, nonce: int,
    chain: ExchangeChain = DEVNET_EXCHANGE_CHAIN,
) -> SignedAction:  # fmt: skip
    action = UsdSend(chain, SIGNATURE_CHAIN, destination, amount, time=nonce)
    return sign_action(action, signer)


def _times(updates: list[LedgerUpdate]) -> list[int]:
    return [update.time for update in updates]


def _account() -> LocalAccount:
    account: LocalAccount = Account.create()
    return account


async def test_an_account_shows_its_perps_usd(backend: ExchangeBackend) -> None:
    port, driver = backend.port, backend.driver
    user = _account().address
    driver.fund_usd(user, "1234.5")
    held = Decimal("1234.5")
    assert await port.clearinghouse_state(user) == ClearinghouseState(held, held)
    nobody = _account().address
    assert await port.clearinghouse_state(nobody) == ClearinghouseState(Decimal(0), Decimal(0))


async def test_the_spot_tokens_are_listed_with_their_decimals(backend: ExchangeBackend) -> None:
    listed = await backend.port.spot_meta()
    assert listed == [
        SpotTokenMeta(token.name, token.index, token.token_id, token.sz_decimals,
                      token.wei_decimals)
        for token in SPOT_TOKENS
    ]  # fmt: skip


async def test_an_account_shows_its_spot_balances(backend: ExchangeBackend) -> None:
    port, driver = backend.port, backend.driver
    user = _account().address
    driver.fund_spot(user, HYPE, "12.5")
    driver.fund_spot(user, USDC, "3")
    driver.fund_usd(user, "99")  # perps USD is no spot balance
    assert await port.spot_balances(user) == [
        SpotBalance("USDC", USDC.index, Decimal(3), Decimal(0)),
        SpotBalance("HYPE", HYPE.index, Decimal("12.5"), Decimal(0)),
    ]
    assert await port.spot_balances(_account().address) == []


async def test_a_usd_send_moves_perps_usd_and_is_in_both_ledgers(
    backend: ExchangeBackend,
) -> None:
    port, driver = backend.port, backend.driver
    signer, destination = _account(), _account().address
    driver.fund_usd(signer.address, "100")
    now = driver.now_ms()
    assert await port.post_action(_usd_send(signer, destination, "25.5", now)) == (
        ActionAccepted(now)
    )
    assert await port.clearinghouse_state(signer.address) == ClearinghouseState(
        Decimal("74.5"), Decimal("74.5")
    )
    assert (await port.clearinghouse_state(destination)).withdrawable == Decimal("25.5")
    sent = Transfer(
        "internalTransfer", signer.address.lower(), destination.lower(), "USDC",
        Decimal("25.5"), now,
    )  # fmt: skip
    (update,) = await port.ledger_updates(signer.address, start_ms=now - 1)
    assert (update.time, update.delta) == (now, sent)
    assert await port.ledger_updates(destination, start_ms=now - 1) == [update]


async def test_spot_sends_and_asset_sends_are_ledgered_with_their_dexes(
    backend: ExchangeBackend,
) -> None:
    port, driver = backend.port, backend.driver
    signer, destination = _account(), _account().address
    driver.fund_spot(signer.address, HYPE, "10")
    driver.fund_usd(signer.address, "10")
    first = driver.now_ms()
    spot = SpotSend(
        DEVNET_EXCHANGE_CHAIN, SIGNATURE_CHAIN, destination, "2.5", HYPE.wire_name, time=first
    )
    assert await port.post_action(sign_action(spot, signer)) == ActionAccepted(first)
    driver.advance(1_000)
    second = driver.now_ms()
    to_spot = SendAsset(
        DEVNET_EXCHANGE_CHAIN, SIGNATURE_CHAIN, destination, "4", PERPS_DEX, SPOT_DEX,
        USDC.wire_name, "", nonce_value=second,
    )  # fmt: skip
    assert await port.post_action(sign_action(to_spot, signer)) == ActionAccepted(second)
    user, to = signer.address.lower(), destination.lower()
    updates = await port.ledger_updates(destination, start_ms=first)
    assert [(u.time, u.delta) for u in updates] == [
        (first, Transfer("spotTransfer", user, to, "HYPE", Decimal("2.5"), first, "spot", "spot")),
        (second, Transfer("send", user, to, "USDC", Decimal(4), second, PERPS_DEX, SPOT_DEX)),
    ]
    assert await port.spot_balances(destination) == [
        SpotBalance("USDC", USDC.index, Decimal(4), Decimal(0)),
        SpotBalance("HYPE", HYPE.index, Decimal("2.5"), Decimal(0)),
    ]
    assert (await port.clearinghouse_state(signer.address)).withdrawable == Decimal(6)


async def test_the_ledger_is_read_between_its_times(backend: ExchangeBackend) -> None:
    port, driver = backend.port, backend.driver
    signer, destination = _account(), _account().address
    driver.fund_usd(signer.address, "10")
    first = driver.now_ms()
    await port.post_action(_usd_send(signer, destination, "1", first))
    driver.advance(5_000)
    second = driver.now_ms()
    await port.post_action(_usd_send(signer, destination, "2", second))
    assert _times(await port.ledger_updates(destination, start_ms=first)) == [first, second]
    assert _times(await port.ledger_updates(destination, start_ms=first + 1)) == [second]
    assert _times(await port.ledger_updates(destination, start_ms=0, end_ms=first)) == [first]
    assert await port.ledger_updates(destination, start_ms=second + 1) == []


async def test_refused_actions_move_nothing(backend: ExchangeBackend) -> None:
    port, driver = backend.port, backend.driver
    signer, destination = _account(), _account().address
    driver.fund_usd(signer.address, "10")
    now = driver.now_ms()
    await port.post_action(_usd_send(signer, destination, "1", now))
    refused = [
        (_usd_send(signer, destination, "1", now), "duplicate nonce"),
        (_usd_send(signer, destination, "10", now + 1), "Insufficient balance"),
        (_usd_send(signer, destination, "1", now - PAST_WINDOW_MS), "Invalid nonce"),
        (_usd_send(signer, destination, "1", now + 2, chain="Mainnet"), "Testnet"),
        (_usd_send(_account(), destination, "1", now + 3), "does not exist"),
    ]
    for action, said in refused:
        with pytest.raises(ActionRefused) as refusal:
            await port.post_action(action)
        assert said in refusal.value.message
    assert (await port.clearinghouse_state(signer.address)).withdrawable == Decimal(9)
    assert len(await port.ledger_updates(signer.address, start_ms=0)) == 1
