"""Answers recorded from the devnet service, read into the models: every item shape told
apart, amounts as integers, the listing's query string."""

from __future__ import annotations

import json

from conftest import recorded
from crossfill_client import QuoteRequest, RequestFilters, RequestStatus
from crossfill_client.models import (
    ChainList,
    EvmTransactionData,
    Quote,
    RequestPage,
    SignatureData,
    StatusRecord,
    SvmTransactionData,
)
from crossfill_client.models.quote import ExchangeActionData


def test_evm_quote_has_an_approval_then_a_checked_deposit() -> None:
    quote = Quote.model_validate(recorded("quote_evm_usdc"))
    approve, deposit = quote.steps
    assert (approve.id, deposit.id) == ("approve", "deposit")
    for step in quote.steps:
        assert isinstance(step.items[0].data, EvmTransactionData)
    assert approve.items[0].check is None
    check = deposit.items[0].check
    assert check is not None and check.endpoint.endswith(quote.request_id)
    assert quote.request_ids == (quote.request_id,)
    assert quote.details.currency_in.amount == 1_000_000
    assert quote.details.currency_in.currency.decimals == 6
    assert quote.deposit_address is None


def test_svm_quote_carries_instructions() -> None:
    quote = Quote.model_validate(recorded("quote_svm_withdrawal"))
    data = quote.steps[0].items[0].data
    assert isinstance(data, SvmTransactionData)
    assert data.chain_id == 792703809 and len(data.instructions) == 2
    assert all(bytes.fromhex(instruction.data) for instruction in data.instructions)


def test_perps_withdrawal_is_a_signature_then_an_exchange_action() -> None:
    quote = Quote.model_validate(recorded("quote_perps_withdrawal"))
    authorize, deposit = (step.items[0].data for step in quote.steps)
    assert isinstance(authorize, SignatureData)
    assert authorize.sign.signature_kind == "eip712" and authorize.post.endpoint == "/authorize"
    assert isinstance(deposit, ExchangeActionData)
    assert (
        deposit.action.type == "sendAsset" and deposit.action.parameters["nonce"] == deposit.nonce
    )


def test_status_listing_and_chains() -> None:
    status = StatusRecord.model_validate(recorded("status_success"))
    assert status.status is RequestStatus.SUCCESS and status.status.is_final
    page = RequestPage.model_validate(recorded("requests_page"))
    (record,) = page.requests
    assert record.data.in_txs and record.data.in_txs[0].chain_id == 900001
    assert page.continuation is not None
    chains = ChainList.model_validate(recorded("chains")).chains
    assert {chain.vm_type for chain in chains} >= {"evm", "svm"}


def test_quote_request_is_sent_in_wire_form() -> None:
    request = QuoteRequest(
        user="0x" + "11" * 20,
        origin_chain_id=1,
        destination_chain_id=2,
        origin_currency="0x" + "00" * 20,
        destination_currency="0x" + "00" * 20,
        amount=10**18,
        slippage_tolerance=50,
        use_deposit_address=True,
        topupGas=True,
    )
    assert request.wire() == {
        "user": "0x" + "11" * 20, "originChainId": 1, "destinationChainId": 2,
        "originCurrency": "0x" + "00" * 20, "destinationCurrency": "0x" + "00" * 20,
        "amount": str(10**18), "tradeType": "EXACT_INPUT", "slippageTolerance": "50",
        "useDepositAddress": True, "topupGas": True,
    }  # fmt: skip


def test_listing_filters_become_its_query() -> None:
    filters = RequestFilters(
        status=RequestStatus.FAILURE,
        origin_chain_id=900001,
        features=["app_fees", "gas_top_up"],
        filters=[{"recipient": "0x" + "aa" * 20}, {"not:status": ["refund"]}],
        include_child_requests=True,
        limit=5,
    )
    query = filters.query("cursor-1")
    assert query["status"] == "failure" and query["originChainId"] == "900001"
    assert query["features"] == "app_fees,gas_top_up"
    assert json.loads(query["filters"])[1] == {"not:status": ["refund"]}
    assert query["includeChildRequests"] == "true" and query["limit"] == "5"
    assert query["continuation"] == "cursor-1"
    assert "term" not in query  # what is not set is not sent
