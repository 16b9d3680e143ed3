"""What a mined gasless execution does to its request (`domain.gasless.settlement`), and which
requests a call's logs pay (`kinds.evm.call_payments`)."""

from __future__ import annotations

import pytest

from crossfill.domain.gasless import (
    NO_DEPOSIT_REASON,
    REVERTED_REASON,
    MinedExecution,
    RevertFacts,
    settlement,
)
from crossfill.domain.status import RequestStatus, can_move
from crossfill.kinds.evm.call_payments import payments_in
from tests.unit.receipt_logs import multicall_log, native_deposit_log, transfer_log

TX = "0x" + "cd" * 32
DEPOSITORY, ROUTER, STRANGER = "0x" + "d0" * 20, "0x" + "e0" * 20, "0x" + "f0" * 20
ORDER, REQUEST = "0x" + "0a" * 32, "0x" + "0b" * 32
USER = "0x" + "11" * 20


def _mined(*, succeeded: bool, paid: bool = False, standalone: bool = False) -> MinedExecution:
    return MinedExecution(TX, succeeded=succeeded, paid_request=paid, standalone=standalone)


def test_a_call_that_paid_its_request_leaves_it_to_the_indexer() -> None:
    assert settlement(_mined(succeeded=True, paid=True), None).status is None


def test_a_call_that_mined_without_paying_its_request_fails_it() -> None:
    outcome = settlement(_mined(succeeded=True), None)
    assert (outcome.status, outcome.fail_reason) == (RequestStatus.FAILURE, NO_DEPOSIT_REASON)
    assert outcome.details is not None
    assert outcome.details.to_json() == {
        "message": "the sponsored call mined without reverting but made no deposit for this "
        "request",
        "txHash": TX,
        "revert": None,
    }


@pytest.mark.parametrize("standalone", [False, True])
def test_a_reverted_call_fails_its_request_with_what_the_contract_said(standalone: bool) -> None:
    revert = RevertFacts(
        "NonceAlreadyUsed", "NonceAlreadyUsed(0)", bytes.fromhex("91cab504" + "00" * 32)
    )
    outcome = settlement(_mined(succeeded=False, standalone=standalone), revert)
    assert (outcome.status, outcome.fail_reason) == (RequestStatus.FAILURE, REVERTED_REASON)
    assert outcome.details is not None
    assert outcome.details.to_json() == {
        "message": "the sponsored call reverted: NonceAlreadyUsed(0)",
        "txHash": TX,
        "revert": {"error": "NonceAlreadyUsed", "data": "0x91cab504" + "00" * 32},
    }


def test_a_revert_nobody_could_read_still_fails_the_request() -> None:
    outcome = settlement(_mined(succeeded=False), None)
    assert outcome.fail_reason == REVERTED_REASON
    assert outcome.details is not None and outcome.details.revert is None
    assert "no revert reason could be read" in outcome.details.message


def test_a_standalone_call_that_mined_succeeds_and_may_end_from_depositing() -> None:
    assert settlement(_mined(succeeded=True, standalone=True), None).status is RequestStatus.SUCCESS
    assert can_move(RequestStatus.DEPOSITING, RequestStatus.SUCCESS)


def test_payments_are_read_from_the_chains_own_contracts_only() -> None:
    logs = [
        native_deposit_log(DEPOSITORY, USER, 10, ORDER),
        native_deposit_log(STRANGER, USER, 10, "0x" + "0c" * 32),  # a look-alike elsewhere
        multicall_log(ROUTER, USER, bytes.fromhex(REQUEST[2:])),
        multicall_log(ROUTER, USER, b"not an id"),
        transfer_log(STRANGER, USER, DEPOSITORY, 10),
    ]
    payments = payments_in(logs, depository=DEPOSITORY.upper(), router=ROUTER)
    assert payments.order_ids == {ORDER}
    assert payments.request_ids == {REQUEST}
    assert payments.pays(order_id=ORDER, request_id="0x" + "99" * 32)
    assert payments.pays(order_id="0x" + "98" * 32, request_id=REQUEST)
    assert not payments.pays(order_id="0x" + "0c" * 32, request_id="0x" + "99" * 32)
    assert not payments_in([], depository=DEPOSITORY, router=ROUTER).pays(
        order_id=ORDER, request_id=REQUEST
    )
