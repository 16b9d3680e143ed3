"""The devnet perps exchange beside the session's EVM devnet: an exchange process per module
(its solver account funded), and the service with workers on a deployment that includes it
(a user's client posts actions to the exchange's API)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from crossfill.config import Deployment
from crossfill.devnet.exchange.process import ExchangeProcess
from crossfill.kinds.perps.config import PerpsExchangeConfig
from crossfill_client import QuoteRequest
from tests.conftest import RunningDevnet
from tests.e2e.bridging import OPERATOR_TOKEN, ORIGIN, rpc_urls
from tests.support.devnets import exchange_config, running_exchange, with_exchange
from tests.support.service import ServiceThread, StartService

PERPS_ID = 1337
PERPS_USDC = "0x" + "0" * 32


def to_perps(user: str, recipient: str, origin_currency: str, amount: int,
             destination_currency: str = PERPS_USDC) -> QuoteRequest:  # fmt: skip
    return QuoteRequest(
        user=user, origin_chain_id=ORIGIN, destination_chain_id=PERPS_ID,
        origin_currency=origin_currency, destination_currency=destination_currency,
        amount=amount, recipient=recipient,
    )  # fmt: skip


@pytest.fixture(scope="module")
def exchange(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExchangeProcess]:
    with running_exchange(tmp_path_factory.mktemp("exchange")) as process:
        yield process


def perps_config(exchange: ExchangeProcess, **changes: Any) -> PerpsExchangeConfig:
    return exchange_config(exchange, **changes)


@pytest.fixture
def perps_deployment(devnet: RunningDevnet, exchange: ExchangeProcess) -> Deployment:
    return with_exchange(devnet.deployment, exchange)


@pytest.fixture
def perps_service(start_service: StartService, perps_deployment: Deployment) -> ServiceThread:
    return start_service(
        perps_deployment, run_workers=True, settings={"admin_token": OPERATOR_TOKEN}
    )


@pytest.fixture
def service(perps_service: ServiceThread) -> ServiceThread:
    """The service users' clients talk to (`user_client`)."""
    return perps_service


@pytest.fixture
def http(perps_service: ServiceThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=perps_service.base_url, timeout=10) as client:
        yield client


@pytest.fixture
def chain_urls(devnet: RunningDevnet, exchange: ExchangeProcess) -> dict[int, str]:
    """The devnet's nodes, and the exchange's API for its actions."""
    return {**rpc_urls(devnet), PERPS_ID: exchange.api_url}


def exchange_info(exchange: ExchangeProcess, **body: Any) -> Any:
    reply = httpx.post(f"{exchange.api_url}/info", json=body, timeout=10)
    assert reply.status_code == 200, reply.text
    return reply.json()


def withdrawable(exchange: ExchangeProcess, user: str) -> Decimal:
    """The account's perps USDC, as the exchange's `clearinghouseState` shows it."""
    return Decimal(exchange_info(exchange, type="clearinghouseState", user=user)["withdrawable"])


def ledger(exchange: ExchangeProcess, user: str) -> list[dict[str, Any]]:
    updates: list[dict[str, Any]] = exchange_info(
        exchange, type="userNonFundingLedgerUpdates", user=user, startTime=0
    )
    return updates
