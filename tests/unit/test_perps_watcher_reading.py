"""How the perps watcher reads the solver's ledger: which entries are transfers in, and what
landed in the solver's account (what a refund sends back)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from crossfill.devnet.exchange.deployment import perps_document
from crossfill.kinds.perps.client import LedgerUpdate, OtherDelta, Transfer, delta_of
from crossfill.kinds.perps.config import PERPS_USDC_ADDRESS, PerpsExchangeConfig
from crossfill.kinds.perps.transfers import IncomingTransfer
from crossfill.kinds.perps.watcher import incoming, landed_currency

CONFIG = PerpsExchangeConfig.model_validate(perps_document(api_url="http://127.0.0.1:1"))
SOLVER = CONFIG.solver.address
USER = "0x" + "12" * 20
HYPE_ID = "0x0d01dc56dcaaca66ad901c959b4011ec"


def _update(**changes: object) -> LedgerUpdate:
    fields: dict[str, object] = {
        "kind": "send", "user": USER, "destination": SOLVER.lower(), "token": "USDC",
        "amount": Decimal("25"), "nonce": 7, "source_dex": "", "destination_dex": "",
    }  # fmt: skip
    fields.update(changes)
    return LedgerUpdate(1_000, "0x" + "ab" * 32, Transfer(**fields))  # type: ignore[arg-type]


def test_a_send_to_the_solver_is_a_transfer_in() -> None:
    transfer = incoming(_update(), SOLVER)
    assert transfer == IncomingTransfer(
        hash="0x" + "ab" * 32, time_ms=1_000, sender=USER, token="USDC", source_dex="",
        destination_dex="", amount=Decimal("25"), nonce=7,
    )  # fmt: skip


@pytest.mark.parametrize(
    "update",
    [
        _update(user=SOLVER),  # the solver's own transfer out (a fill or a refund)
        _update(destination=USER),  # someone else's
        _update(nonce=None),  # nothing to match it by
        LedgerUpdate(1_000, "0x" + "cd" * 32, OtherDelta("deposit")),
    ],
)
def test_anything_else_is_not_read_as_a_transfer_in(update: LedgerUpdate) -> None:
    assert incoming(update, SOLVER) is None


def test_the_token_id_is_dropped_from_the_token_name() -> None:
    transfer = incoming(_update(token=f"HYPE:{HYPE_ID}"), SOLVER)
    assert transfer is not None and transfer.token == "HYPE"


def test_perps_usdc_landed_in_perps_is_refunded_as_perps_usdc() -> None:
    transfer = incoming(_update(source_dex="spot"), SOLVER)
    assert transfer is not None
    assert landed_currency(transfer, CONFIG) == (PERPS_USDC_ADDRESS, 25_000_000)


def test_a_spot_token_is_refunded_as_that_spot_token() -> None:
    transfer = incoming(
        _update(token="HYPE", source_dex="spot", destination_dex="spot", amount=Decimal("1.5")),
        SOLVER,
    )
    assert transfer is not None
    assert landed_currency(transfer, CONFIG) == (HYPE_ID, 150_000_000)


def test_a_spot_send_of_usdc_lands_as_spot_usdc_not_perps_usdc() -> None:
    # The exchange's entry of a `spotSend` names no DEX: it moves spot balances.
    delta = {"type": "spotTransfer", "token": "USDC", "amount": "25", "usdcValue": "25",
             "user": USER, "destination": SOLVER.lower(), "fee": "0.0", "nonce": 7}  # fmt: skip
    transfer = incoming(LedgerUpdate(1_000, "0x" + "ab" * 32, delta_of(delta)), SOLVER)
    assert transfer is not None
    assert (transfer.source_dex, transfer.destination_dex) == ("spot", "spot")
    spot_usdc = next(c for c in CONFIG.spot_currencies if c.exchange_name == "USDC")
    assert landed_currency(transfer, CONFIG) == (spot_usdc.address, 25 * 10**spot_usdc.decimals)


@pytest.mark.parametrize(
    "changes",
    [
        {"token": "PURR", "source_dex": "spot", "destination_dex": "spot"},  # not configured
        {"amount": Decimal("0.0000001")},  # finer than perps USD's 6 decimals
    ],
)
def test_what_cannot_be_sent_back_exactly_is_left_to_the_operator(
    changes: dict[str, object],
) -> None:
    transfer = incoming(_update(**changes), SOLVER)
    assert transfer is not None
    assert landed_currency(transfer, CONFIG) is None
