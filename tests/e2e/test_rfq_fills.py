"""Orders external solvers won, filled on the devnet (docs/solvers.md): the winner (a
reference solver, `examples/solver`) fills within its exclusivity through
`Filler.fillExclusive` and the service takes that fill as the order's; a winner that fades is
filled by the operator's own solver once its exclusivity is over (the deadline plus one
block), at the quoted output; every deposit is accounted for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.kinds.evm.config import evm_chain
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    balance,
    deposit_native,
    final_status,
    funded_user,
    native_bridge,
    quote_request_id,
    request_quote,
)
from tests.e2e.conftest import on_database
from tests.e2e.solvers import blocks_mined, reference_solver
from tests.support.service import ServiceThread, StartService

AMOUNT = 10**17
# The quote's life and the exclusivity past it, short so a fade's fallback comes soon.
TTL_SECONDS = 8
EXCLUSIVITY_SECONDS = 4


@pytest.fixture
def filling_service(
    start_service: StartService, devnet: RunningDevnet, database: str | None
) -> ServiceThread:
    deployment = devnet.deployment.model_copy(
        update={
            "quotes": devnet.deployment.quotes.model_copy(update={"min_ttl_seconds": 2}),
            "rfq": devnet.deployment.rfq.model_copy(
                update={"exclusivity_seconds": EXCLUSIVITY_SECONDS}
            ),
        }
    )
    return start_service(
        deployment, run_workers=True, settings=on_database(database, admin_token=OPERATOR_TOKEN)
    )


@pytest.fixture
def destination(devnet: RunningDevnet) -> Iterator[Web3]:
    """The destination, mining a block a second (as a live chain does)."""
    chain = evm_chain(devnet.deployment, DESTINATION)
    assert chain is not None
    with blocks_mined(chain.rpc_url):
        yield Web3(Web3.HTTPProvider(chain.rpc_url))


def _won_quote(service: ServiceThread, user: LocalAccount, winner: str) -> dict[str, Any]:
    """A quote `winner` won (a busy machine may leave one without bids: tried again)."""
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        for _ in range(5):
            body = native_bridge(user.address, amount=str(AMOUNT), ttl=TTL_SECONDS)
            body["recipient"] = Account.create().address
            quote = request_quote(http, body)
            if quote["protocol"].get("solver", {}).get("name") == winner:
                return quote
    raise AssertionError(f"{winner} won no quote")


def _deposited_and_final(
    service: ServiceThread, devnet: RunningDevnet, quote: dict[str, Any], timeout: float
) -> dict[str, Any]:
    user = funded_user(devnet)
    deposit_native(devnet, user, quote, AMOUNT)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        return final_status(http, quote_request_id(quote), timeout=timeout)


def _recipient(quote: dict[str, Any]) -> str:
    return str(quote["protocol"]["v2"]["orderData"]["output"]["payments"][0]["recipient"])


def test_the_winner_fills_within_its_exclusivity(
    filling_service: ServiceThread, devnet: RunningDevnet, destination: Web3
) -> None:
    with (
        reference_solver(filling_service.base_url, devnet, "alpha", fee_bps=2) as alpha,
        reference_solver(filling_service.base_url, devnet, "beta", fee_bps=4),
    ):
        quote = _won_quote(filling_service, funded_user(devnet), "alpha")
        status = _deposited_and_final(filling_service, devnet, quote, timeout=30)

    assert status["status"] == "success", status
    (fill_hash,) = status["txHashes"]
    fill = destination.eth.get_transaction(fill_hash)
    assert fill["from"] == alpha.address  # the winner's own transaction
    mined = destination.eth.get_block(
        destination.eth.get_transaction_receipt(fill_hash)["blockNumber"]
    )
    assert mined["timestamp"] <= quote["protocol"]["solver"]["exclusivityDeadline"]
    expected = AMOUNT * (10_000 - 2) // 10_000
    assert balance(devnet, DESTINATION, NATIVE, _recipient(quote)) == expected


def test_a_winner_that_fades_is_filled_by_the_operator_after_its_exclusivity(
    filling_service: ServiceThread, devnet: RunningDevnet, destination: Web3
) -> None:
    with reference_solver(filling_service.base_url, devnet, "fader", fee_bps=1, fade=True):
        quote = _won_quote(filling_service, funded_user(devnet), "fader")
        deadline = quote["protocol"]["solver"]["exclusivityDeadline"]
        status = _deposited_and_final(filling_service, devnet, quote, timeout=40)

    assert status["status"] == "success", status
    (fill_hash,) = status["txHashes"]
    assert destination.eth.get_transaction(fill_hash)["from"] == accounts.solver().address
    filled_in = destination.eth.get_transaction_receipt(fill_hash)["blockNumber"]
    # The first block past the deadline, then the fallback's fill in the next (a block, or
    # two on a machine that held the solver's tick past a block).
    first_after = next(
        number
        for number in range(filled_in, 0, -1)
        if destination.eth.get_block(number - 1)["timestamp"] <= deadline
    )
    assert destination.eth.get_block(first_after)["timestamp"] > deadline
    print(f"\nfade: filled in block {filled_in}, the first past the deadline {first_after}")
    assert filled_in <= first_after + 2
    # At the quoted output: what the fader bid.
    expected = AMOUNT * (10_000 - 1) // 10_000
    assert balance(devnet, DESTINATION, NATIVE, _recipient(quote)) == expected
