"""SVM quote planning: amounts at the quoted prices, the deposit items, and the input rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from solders.keypair import Keypair

from crossfill.chains import svm_programs as programs
from crossfill.config import Deployment
from crossfill.config.svm import SvmChainConfig
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from crossfill.quoting.svm_quote import SvmQuoteContext, plan_svm_quote
from tests.unit.deployment_samples import deployment_document

EVM = Deployment.model_validate(deployment_document()).chains[0]
VAULT = Keypair().pubkey()
# A fixed user whose lower-cased address is not base58 of 32 bytes (about one random address in
# five lower-cases into another valid address, which the service would rightly accept).
USER = Keypair.from_seed(bytes([1]) * 32).pubkey()
USDC_MINT = "EPjFWdd5AufqSSqeM2qACdYv6nQXBZkkk4Ht7dAJ2B8Q"
SVM = SvmChainConfig.model_validate(
    {
        "name": "svm", "display_name": "SVM", "http_rpc_url": "http://127.0.0.1:8899",
        "solver": {"address": str(VAULT), "key": "devnet-svm:solver"},
        "native_currency": {"address": "1" * 32, "symbol": "SOL", "name": "Solana",
                            "decimals": 9, "usd_price": "150"},
        "token_currencies": [{"address": USDC_MINT, "symbol": "USDC", "name": "USD Coin",
                              "decimals": 6, "usd_price": "1"}],
    }
)  # fmt: skip
EVM_USDC = next(c.address for c in EVM.erc20_currencies if c.symbol == "USDC")


def _context(price: str = "1") -> SvmQuoteContext:
    return SvmQuoteContext(
        evm=EVM, svm=SVM, evm_price=Decimal(price), now=datetime(2026, 11, 23, tzinfo=UTC),
        ttl=timedelta(minutes=5), request_id=b"\x01" * 32, order_id=b"\x02" * 32,
    )  # fmt: skip


def _from_svm(**changes: Any) -> QuoteRequest:
    fields: dict[str, Any] = {
        "user": str(USER), "origin_chain_id": SVM.id, "destination_chain_id": EVM.id,
        "origin_currency": USDC_MINT, "destination_currency": EVM_USDC, "amount": "10000000",
        "trade_type": "EXACT_INPUT", "recipient": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    }  # fmt: skip
    fields.update(changes)
    return QuoteRequest(**fields)


def test_usdc_out_of_svm_is_the_same_value_less_the_service_fee() -> None:
    quote = plan_svm_quote(_from_svm(), "from_svm", _context())
    fee = 10_000_000 * EVM.fees.service_fee_bps // 10_000
    assert quote.amount_out == 10_000_000 - fee
    assert quote.user == str(USER) and quote.order_id == "0x" + "02" * 32
    assert quote.deposit_instructions is not None
    payment, memo = quote.deposit_instructions
    assert payment.program_id == programs.TOKEN_PROGRAM_ID
    assert bytes(memo.data) == quote.order_id.encode()


def test_sol_in_is_priced_in_usd() -> None:
    quote = plan_svm_quote(
        _from_svm(origin_currency="1" * 32, amount=str(10**9)), "from_svm", _context()
    )
    assert quote.amount_out == 150 * 10**6 * (10_000 - EVM.fees.service_fee_bps) // 10_000


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"user": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}, "INVALID_ADDRESS"),
        ({"user": str(USER).lower()}, "INVALID_ADDRESS"),
        ({"recipient": str(USER)}, "INVALID_RECIPIENT"),
        ({"origin_currency": USDC_MINT.lower()}, "UNSUPPORTED_CURRENCY"),
        ({"max_route_length": 0}, "INVALID_INPUT"),
        ({"trade_type": "EXACT_OUTPUT"}, "UNSUPPORTED_EXECUTION_TYPE"),
        ({"amount": "0"}, "AMOUNT_TOO_LOW"),
    ],
)
def test_bad_input_is_refused_with_its_code(changes: dict[str, Any], code: str) -> None:
    with pytest.raises(QuoteError) as refused:
        plan_svm_quote(_from_svm(**changes), "from_svm", _context())
    assert refused.value.error_code == code


def test_max_route_length_4_and_3_are_accepted() -> None:
    for hops in (4, 3):
        assert plan_svm_quote(_from_svm(max_route_length=hops), "from_svm", _context()).amount_out


def test_a_deposit_over_1232_bytes_is_refused_with_solana_tx_too_large(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from crossfill.quoting import svm_quote

    def oversized(deposit: Any) -> list[Any]:
        return [programs.memo("m" * 1300)]

    monkeypatch.setattr(svm_quote, "deposit_instructions", oversized)
    with pytest.raises(QuoteError) as refused:
        plan_svm_quote(_from_svm(), "from_svm", _context())
    assert refused.value.error_code == "SOLANA_TX_TOO_LARGE"


PAYER = Keypair.from_seed(bytes([2]) * 32).pubkey()


def test_a_deposit_fee_payer_pays_the_fee_and_signs_the_deposit() -> None:
    quote = plan_svm_quote(_from_svm(deposit_fee_payer=str(PAYER)), "from_svm", _context())
    assert quote.fee_payer == str(PAYER) and quote.deposit_instructions is not None
    payment, memo = quote.deposit_instructions
    # The user still pays the deposit; the fee payer is a signer the Memo program checks.
    assert [meta.pubkey for meta in payment.accounts if meta.is_signer] == [USER]
    assert [(meta.pubkey, meta.is_signer) for meta in memo.accounts] == [(PAYER, True)]


def test_without_a_deposit_fee_payer_the_user_pays_and_signs_alone() -> None:
    quote = plan_svm_quote(_from_svm(), "from_svm", _context())
    assert quote.fee_payer == str(USER) and quote.deposit_instructions is not None
    assert quote.deposit_instructions[1].accounts == []


@pytest.mark.parametrize(
    ("payer", "code"),
    [
        ("0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "INVALID_ADDRESS"),
        ("1" * 31, "INVALID_ADDRESS"),  # 31 bytes
        ("not-an-address", "INVALID_ADDRESS"),
    ],
)
def test_a_deposit_fee_payer_must_be_an_svm_address(payer: str, code: str) -> None:
    with pytest.raises(QuoteError) as refused:
        plan_svm_quote(_from_svm(deposit_fee_payer=payer), "from_svm", _context())
    assert refused.value.error_code == code
    assert "depositFeePayer" in refused.value.message


def _to_svm(**changes: Any) -> QuoteRequest:
    fields: dict[str, Any] = {
        "user": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "origin_chain_id": EVM.id,
        "destination_chain_id": SVM.id, "origin_currency": EVM_USDC,
        "destination_currency": USDC_MINT, "amount": "10000000", "trade_type": "EXACT_INPUT",
        "recipient": str(USER),
    }  # fmt: skip
    fields.update(changes)
    return QuoteRequest(**fields)


@pytest.mark.parametrize(
    ("changes", "named"),
    [({"deposit_fee_payer": str(PAYER)}, "depositFeePayer"), ({"protocol_version": "v1"}, "v1")],
)
def test_options_of_svm_deposits_are_refused_for_a_deposit_on_an_evm_chain(
    changes: dict[str, Any], named: str
) -> None:
    assert plan_svm_quote(_to_svm(), "to_svm", _context()).fee_payer is None
    with pytest.raises(QuoteError) as refused:
        plan_svm_quote(_to_svm(**changes), "to_svm", _context())
    assert refused.value.error_code == "UNSUPPORTED_EXECUTION_TYPE"
    assert named in refused.value.message


def test_v1_from_an_svm_chain_is_what_happens_anyway() -> None:
    """The SVM deposit is paid to the solver's vault: v1 holds as quoted."""
    assert plan_svm_quote(_from_svm(protocol_version="v1"), "from_svm", _context()).amount_out
