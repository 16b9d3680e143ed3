"""SVM quote planning: amounts at the quoted prices, the deposit items, and the input rules."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import jsonschema
import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from crossfill.errors import BadRequest
from crossfill.kinds.evm.config import evm_chains
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.quote import Direction, SvmQuoteContext, plan_svm_quote
from crossfill.kinds.svm.response import svm_quote_wire
from crossfill.quoting.cross_vm import QuoteStamp
from crossfill.quoting.errors import QuoteError, QuoteUnavailable
from crossfill.quoting.money import format_usd
from crossfill.quoting.request import AppFee, ExtraTx, QuoteRequest
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.conftest import SCHEMAS_DIR
from tests.unit.deployment_samples import sample_deployment

EVM = evm_chains(sample_deployment())[0]
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
GWEI = 10**9
SOLVER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
EVM_USDC = next(c.address for c in EVM.erc20_currencies if c.symbol == "USDC")


def _context(price: str = "1") -> SvmQuoteContext:
    return SvmQuoteContext(
        evm=EVM, svm=SVM, evm_price=Decimal(price), evm_native_price=Decimal(3000),
        evm_fee_per_gas=GWEI,
        stamp=QuoteStamp(now=datetime(2026, 11, 23, tzinfo=UTC), ttl=timedelta(minutes=5),
                         request_id=b"\x01" * 32, salt=2, solver=SOLVER),
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
    assert quote.terms.amount_out == 10_000_000 - fee
    assert quote.terms.user == str(USER) and quote.order_id == "0x" + quote.order.order_id().hex()
    assert quote.deposit_instructions is not None
    payment, memo = quote.deposit_instructions
    assert payment.program_id == programs.TOKEN_PROGRAM_ID
    assert bytes(memo.data) == quote.order_id.encode()


def test_sol_in_is_priced_in_usd() -> None:
    quote = plan_svm_quote(
        _from_svm(origin_currency="1" * 32, amount=str(10**9)), "from_svm", _context()
    )
    assert quote.terms.amount_out == 150 * 10**6 * (10_000 - EVM.fees.service_fee_bps) // 10_000


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


def test_an_svm_deposit_above_a_u64_is_invalid_input_and_the_largest_one_is_planned() -> None:
    # 2**100 once reached the deposit's encoding and answered 500.
    for amount in (2**64, 2**100):
        with pytest.raises(QuoteError) as refused:
            plan_svm_quote(_from_svm(amount=str(amount)), "from_svm", _context())
        assert refused.value.error_code == "INVALID_INPUT"
        assert "2**64" in str(refused.value)
    largest = plan_svm_quote(_from_svm(amount=str(2**64 - 1)), "from_svm", _context())
    assert largest.deposit_instructions is not None


def test_max_route_length_4_and_3_are_accepted() -> None:
    for hops in (4, 3):
        assert plan_svm_quote(
            _from_svm(max_route_length=hops), "from_svm", _context()
        ).terms.amount_out


def test_a_deposit_over_1232_bytes_is_refused_with_solana_tx_too_large(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from crossfill.kinds.svm import quote as svm_quote

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
    assert plan_svm_quote(_from_svm(protocol_version="v1"), "from_svm", _context()).terms.amount_out


SOL = "1" * 32
QUOTE_SCHEMA = jsonschema.Draft202012Validator(
    json.loads((SCHEMAS_DIR / "quote.schema.json").read_text())
)
WIRE_CASES = [
    pytest.param(_from_svm(), "from_svm", id="svm-usdc-to-evm-usdc"),
    pytest.param(
        _from_svm(origin_currency=SOL, destination_currency=NATIVE_EVM_ADDRESS, amount=str(10**9)),
        "from_svm",
        id="sol-to-eth",
    ),
    pytest.param(_to_svm(), "to_svm", id="evm-usdc-to-svm-usdc"),
    pytest.param(
        _to_svm(origin_currency=NATIVE_EVM_ADDRESS, destination_currency=SOL, amount=str(10**17)),
        "to_svm",
        id="eth-to-sol",
    ),
]


@pytest.mark.parametrize(("body", "direction"), WIRE_CASES)
def test_the_answer_matches_the_quote_schema(body: QuoteRequest, direction: Direction) -> None:
    wire = svm_quote_wire(plan_svm_quote(body, direction, _context()), EVM)
    QUOTE_SCHEMA.validate(wire)


@pytest.mark.parametrize(("body", "direction"), WIRE_CASES)
def test_impacts_fees_and_sponsorship_mean_what_they_mean_on_evm(
    body: QuoteRequest, direction: Direction
) -> None:
    quote = plan_svm_quote(body, direction, _context())
    wire = svm_quote_wire(quote, EVM)
    details, fees = wire["details"], wire["fees"]
    usd_in = Decimal(details["currencyIn"]["amountUsd"])
    usd_out = Decimal(details["currencyOut"]["amountUsd"])
    # totalImpact is what the user gets less what it pays, in USD; no swap, no swap impact.
    assert Decimal(details["totalImpact"]["usd"]) == usd_out - usd_in < 0
    assert details["swapImpact"] == {"usd": "0", "percent": "0"}
    percent = Decimal(details["totalImpact"]["percent"])
    assert abs(percent - (usd_out - usd_in) * 100 / usd_in) < Decimal("0.01")
    assert Decimal(details["expandedPriceImpact"]["relay"]["usd"]) == usd_out - usd_in
    assert fees["subsidized"]["amount"] == "0"
    assert fees["relayer"]["amount"] == str(quote.terms.service_fee) != "0"
    # Nothing is sponsored: the user pays every fee.
    quoted = wire["feeSponsorship"]["quoted"]
    assert quoted["selectedComponents"] == [] and quoted["capHit"] is False
    assert quoted["sponsoredTotal"]["amount"] == "0"
    assert quoted["userPaysTotal"]["amount"] == str(quote.terms.service_fee)
    assert wire["feeSponsorship"]["actual"] is None


@pytest.mark.parametrize(("body", "direction"), WIRE_CASES)
def test_the_order_id_is_the_hash_of_the_stated_order(
    body: QuoteRequest, direction: Direction
) -> None:
    quote = plan_svm_quote(body, direction, _context())
    protocol = svm_quote_wire(quote, EVM)["protocol"]["v2"]
    order = protocol["orderData"]
    assert protocol["orderId"] == "0x" + quote.order.order_id().hex()
    (payment,) = order["output"]["payments"]
    assert payment["expectedAmount"] == str(quote.terms.amount_out)
    assert order["inputs"][0]["payment"]["amount"] == str(quote.terms.amount_in)
    assert protocol["paymentDetails"]["chainId"] == order["inputs"][0]["payment"]["chainId"]
    svm_side = order["output"] if direction == "to_svm" else order["inputs"][0]["payment"]
    assert svm_side["chainId"] == SVM.name
    recipient = bytes.fromhex(payment["recipient"][2:])
    expected = Pubkey.from_string(quote.terms.recipient) if direction == "to_svm" else None
    assert recipient == (bytes(expected) if expected else bytes.fromhex(quote.terms.recipient[2:]))


@pytest.mark.parametrize(
    ("body", "direction", "gas"),
    [
        (_to_svm(origin_currency=NATIVE_EVM_ADDRESS, destination_currency=SOL, amount=str(10**17)),
         "to_svm", EVM.fees.deposit_gas_native * GWEI),
        (_to_svm(), "to_svm", EVM.fees.deposit_gas_erc20 * GWEI),
        (_from_svm(), "from_svm", 5000),
        (_from_svm(deposit_fee_payer=str(PAYER)), "from_svm", 0),
    ],
)  # fmt: skip
def test_gas_is_the_users_own_deposit_fee_in_the_origins_gas_currency(
    body: QuoteRequest, direction: Direction, gas: int
) -> None:
    fee = svm_quote_wire(plan_svm_quote(body, direction, _context()), EVM)["fees"]["gas"]
    origin = EVM.native_currency.address if direction == "to_svm" else SOL
    assert (fee["currency"]["address"], fee["amount"]) == (origin.lower(), str(gas))


def test_without_a_gas_price_a_deposit_on_evm_is_503_once_its_inputs_are_checked() -> None:
    unknown = dataclasses.replace(_context(), evm_fee_per_gas=None)
    with pytest.raises(QuoteUnavailable) as unavailable:
        plan_svm_quote(_to_svm(), "to_svm", unknown)
    assert unavailable.value.error_code == "SERVICE_UNAVAILABLE"
    with pytest.raises(QuoteError) as refused:
        plan_svm_quote(_to_svm(app_fees=(AppFee(str(PAYER), "10"),)), "to_svm", unknown)
    assert refused.value.error_code == "UNSUPPORTED_EXECUTION_TYPE"
    assert plan_svm_quote(_from_svm(), "from_svm", unknown).deposit_gas == 5000


def test_a_fixed_rate_is_the_whole_service_fee_and_never_below_it() -> None:
    bps = EVM.fees.service_fee_bps + 20
    quote = plan_svm_quote(_from_svm(fixed_rate=str(bps)), "from_svm", _context())
    assert quote.terms.service_fee == 10_000_000 * bps // 10_000
    details = svm_quote_wire(quote, EVM)["details"]
    assert details["isFixedRate"] is True
    assert details["fixedRateFee"] == {"usd": format_usd(quote.terms.service_fee)}
    floating = svm_quote_wire(plan_svm_quote(_from_svm(), "from_svm", _context()), EVM)
    assert floating["details"]["fixedRateFee"] is None
    with pytest.raises(QuoteError) as refused:
        plan_svm_quote(
            _from_svm(fixed_rate=str(EVM.fees.service_fee_bps - 1)), "from_svm", _context()
        )
    assert refused.value.error_code == "AMOUNT_TOO_LOW"
    assert f"at least {EVM.fees.service_fee_bps} bps" in refused.value.message


# Every quote body option (compat notes "Quote request body") an SVM route refuses: the field,
# its value, the error (its class and errorCode; BadRequest has none of its own).
REFUSED: list[tuple[str, Any, type[Exception], str | None]] = [
    ("txs", (ExtraTx(to="0x70997970C51812dc3A010C7d01b50e0d17dc79C8"),), QuoteError,
     "EXTRA_TXS_NOT_SUPPORTED"),
    ("txs_gas_limit", 100_000, QuoteError, "INVALID_EXTRA_TXS"),
    ("authorization_list", ({"chainId": 1},), QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("gas_limit_for_deposit_specified_txs", 100_000, QuoteError,
     "INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS"),
    ("recovery_address", str(PAYER), QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("strict", True, QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("use_deposit_address", True, QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("use_external_liquidity", True, QuoteError, "UNSUPPORTED_ROUTE"),
    ("referrer_address", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", QuoteError,
     "UNSUPPORTED_EXECUTION_TYPE"),
    ("additional_data", {"userPublicKey": "02ab"}, QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("include_compute_unit_limit", True, QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("topup_gas", True, QuoteError, "UNSUPPORTED_ROUTE"),
    ("topup_gas_amount", "1000000", BadRequest, None),
    ("explicit_deposit", False, QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("use_permit", True, QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("permit_expiry", 600, BadRequest, None),
    ("origin_gas_overhead", 50_000, BadRequest, None),
    ("late_payment_slippage_tolerance", "100", QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("slippage_tolerance", "10001", QuoteError, "INVALID_SLIPPAGE_TOLERANCE"),
    ("app_fees", (AppFee(recipient=str(PAYER), fee="10"),), QuoteError,
     "UNSUPPORTED_EXECUTION_TYPE"),
    ("subsidize_fees", True, QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("sponsored_fee_components", ("execution",), BadRequest, None),
    ("max_subsidization_amount", "1000000", BadRequest, None),
    ("fixed_rate", "1.5", BadRequest, None),
    ("protocol_version", "v3", QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
    ("trade_type", "EXPECTED_OUTPUT", QuoteError, "UNSUPPORTED_EXECUTION_TYPE"),
]  # fmt: skip
# Every other option: served (it does what it says), or, for the swap-tuning ones, nothing to
# restrict on a direct transfer.
SERVED: list[tuple[str, Any]] = [
    ("refund_to", str(PAYER)),
    ("referrer", "my-app"),
    ("max_route_length", 4),
    ("use_shared_accounts", True),
    ("refund_on_origin", True),
    ("enable_true_exact_output", True),
    ("use_fallbacks", True),
    ("include_protocol_data", True),
    ("force_solver_execution", True),
    ("slippage_tolerance", "100"),
    ("included_swap_sources", ("jupiter",)),
    ("excluded_swap_sources", ("jupiter",)),
    ("included_origin_swap_sources", ("jupiter",)),
    ("included_destination_swap_sources", ("uniswap-v2",)),
    ("override_price_impact", True),
    ("disable_swap_provider_preference", True),
    ("disable_origin_swaps", True),
    ("fixed_rate", "100"),
    ("ttl", 600),
    ("protocol_version", "v1"),
    ("deposit_fee_payer", str(PAYER)),
]


def test_the_tables_cover_every_quote_body_option() -> None:
    required = {"user", "origin_chain_id", "destination_chain_id", "origin_currency",
                "destination_currency", "amount", "recipient"}  # fmt: skip
    covered = {name for name, *_ in REFUSED} | {name for name, _ in SERVED}
    assert covered | required == {field.name for field in dataclasses.fields(QuoteRequest)}


@pytest.mark.parametrize(("field", "value", "error", "code"), REFUSED)
def test_an_option_svm_routes_do_not_serve_is_refused_naming_it(
    field: str, value: Any, error: type[Exception], code: str | None
) -> None:
    for body, direction in ((_from_svm, "from_svm"), (_to_svm, "to_svm")):
        with pytest.raises(error) as refused:
            plan_svm_quote(body(**{field: value}), direction, _context())  # type: ignore[arg-type]
        assert getattr(refused.value, "error_code", None) == code
        assert refused.value.args[0]


@pytest.mark.parametrize(("field", "value"), SERVED)
def test_an_option_svm_routes_serve_is_accepted(field: str, value: Any) -> None:
    body = _from_svm(**{field: value})
    assert plan_svm_quote(body, "from_svm", _context()).terms.amount_out > 0
