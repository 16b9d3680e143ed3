"""Deposit addresses: where each one is, what a quote for one asks the user to send, which
options it needs, and how a transfer to one is priced or refused. Pure logic."""

from __future__ import annotations

import pytest

from crossfill.app.deposit_addresses import (
    DEPOSIT_ADDRESS_MISMATCH,
    NO_QUOTES,
    TOO_LOW,
    AddressOwner,
    arrival_request,
    dust_reason,
    excess,
    mismatch,
    repriced,
    too_small_to_sweep,
    unpriced_reason,
)
from crossfill.config import Deployment
from crossfill.contracts import calldata
from crossfill.contracts.deposit_addresses import deposit_address, implementation_of
from crossfill.domain.deposit_addresses import child_ids
from crossfill.kinds.evm.config import evm_chains
from crossfill.quoting.deposit_address import sweep_gas
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.prices import gas_cost_on_chain
from crossfill.quoting.steps import steps
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.quote_fixtures import CHAINS, USDC, USER, body, deployment, quote, views

FACTORY = "0x" + "fa" * 20
REFUND_TO = "0x" + "ef" * 20
RECOVERY = "0x" + "cd" * 20
USDC_BRIDGE = {"originCurrency": USDC, "destinationCurrency": USDC, "amount": str(100 * 10**6)}


def with_factory() -> Deployment:
    config = deployment()
    chains = [
        chain.model_copy(
            update={
                "contracts": chain.contracts.model_copy(update={"deposit_address_factory": FACTORY})
            }
        )
        for chain in evm_chains(config)
    ]
    return config.model_copy(update={"chains": chains})


def test_the_implementation_is_the_factorys_first_contract() -> None:
    # A contract's first CREATE is at nonce 1: for anvil's default account that nonce gives
    # the well-known address of its second deployment.
    deployer = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    assert implementation_of(deployer) == "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"


def test_an_address_depends_on_its_key_and_recovery_address() -> None:
    key = bytes(31) + b"\x01"
    first = deposit_address(FACTORY, key, None)
    assert first == deposit_address(FACTORY, key, None)
    assert first != deposit_address(FACTORY, bytes(31) + b"\x02", None)
    assert first != deposit_address(FACTORY, key, RECOVERY)
    assert first == first.lower() and len(first) == 42


def test_a_strict_native_quote_asks_for_a_plain_transfer_to_its_address() -> None:
    config = with_factory()
    quoted = quote(body(useDepositAddress=True), config)
    terms = quoted.deposit_address
    assert terms is not None and terms.type == "strict" and terms.key == quoted.order_id
    assert terms.address == deposit_address(FACTORY, bytes.fromhex(quoted.order_id[2:]), None)
    (step,) = steps(quoted, allowance=0)  # no approval, however little allowance
    assert step["depositAddress"] == terms.address
    item = step["items"][0]["data"]
    assert item == {
        "from": USER,
        "to": terms.address,
        "data": "0x",
        "value": str(quoted.split.amount_in),
        "chainId": CHAINS[0],
    }


def test_an_erc20_quote_asks_for_the_tokens_transfer() -> None:
    quoted = quote(body(**USDC_BRIDGE, useDepositAddress=True), with_factory())
    assert quoted.deposit_address is not None
    (step,) = steps(quoted, allowance=0)
    item = step["items"][0]["data"]
    assert item["to"] == USDC.lower() and item["value"] == "0"
    transfer = calldata.erc20_transfer(quoted.deposit_address.address, quoted.split.amount_in)
    assert item["data"] == calldata.hex_data(transfer)


def test_the_sweep_is_charged_to_the_user() -> None:
    config = with_factory()
    plain = quote(body(**USDC_BRIDGE), config)
    by_address = quote(body(**USDC_BRIDGE, useDepositAddress=True), config)
    assert by_address.split.relayer_gas > plain.split.relayer_gas
    assert by_address.amount_out < plain.amount_out
    # What the quote charges for the sweep is what a transfer must be worth to be swept.
    origin = views(config)[CHAINS[0]]
    sweep = sweep_gas(origin.config.fees, native=False)
    cost = gas_cost_on_chain(origin.config, origin.state, USDC, sweep, now_seconds=0)
    assert by_address.split.relayer_gas - plain.split.relayer_gas == cost


def test_the_sweeps_cost_in_ether_and_in_a_token() -> None:
    origin = views(deployment())[CHAINS[0]]
    # 1.25 gwei of base fee with its 25 % buffer, 0.1 gwei of tip; 3,000 USD an ether.
    fee = 10**9 * 125 // 100 + 10**8
    in_ether = gas_cost_on_chain(origin.config, origin.state, NATIVE_EVM_ADDRESS, 110_000, 0)
    assert in_ether == 110_000 * fee
    in_usdc = gas_cost_on_chain(origin.config, origin.state, USDC, 110_000, 0)
    assert in_usdc == -(-110_000 * fee * 3_000 * 10**6 // 10**18)  # rounded up
    origin.state.priority_fee_per_gas = None  # no gas price read yet
    assert gas_cost_on_chain(origin.config, origin.state, USDC, 110_000, 0) is None


def test_a_transfer_worth_no_more_than_its_sweep_is_not_swept() -> None:
    assert too_small_to_sweep(1, 100) and too_small_to_sweep(100, 100)
    assert not too_small_to_sweep(101, 100)
    assert not too_small_to_sweep(1, None)  # no price to judge by: swept, never held


@pytest.mark.parametrize(
    ("fields", "error_code", "named"),
    [
        ({"useDepositAddress": True, "strict": False}, "INVALID_ADDRESS", "refundTo"),
        ({"useDepositAddress": True, "usePermit": True}, "UNSUPPORTED_EXECUTION_TYPE", "usePermit"),
        (
            {"useDepositAddress": True, "destinationChainId": CHAINS[0]},
            "UNSUPPORTED_EXECUTION_TYPE",
            "cross-chain",
        ),
        ({"recoveryAddress": RECOVERY}, "UNSUPPORTED_EXECUTION_TYPE", "useDepositAddress"),
        ({"strict": True}, "UNSUPPORTED_EXECUTION_TYPE", "useDepositAddress"),
        ({"useDepositAddress": True, "recoveryAddress": "0x12"}, "INVALID_ADDRESS", "recovery"),
    ],
)
def test_deposit_address_options_are_checked(
    fields: dict[str, object], error_code: str, named: str
) -> None:
    with pytest.raises(QuoteError) as refused:
        quote(body(**fields), with_factory())
    assert refused.value.error_code == error_code
    assert named in refused.value.message


def test_a_chain_without_a_factory_offers_no_deposit_addresses() -> None:
    with pytest.raises(QuoteError) as refused:
        quote(body(useDepositAddress=True))
    assert refused.value.error_code == "UNSUPPORTED_EXECUTION_TYPE"


def test_an_open_address_keeps_its_recovery_address_and_refund_target() -> None:
    quoted = quote(
        body(useDepositAddress=True, strict=False, refundTo=REFUND_TO, recoveryAddress=RECOVERY),
        with_factory(),
    )
    assert quoted.deposit_address is not None
    assert quoted.deposit_address.type == "open"
    assert quoted.deposit_address.recovery_address == RECOVERY
    assert quoted.refund_to.lower() == REFUND_TO


OWNER = AddressOwner(
    type="open",
    user=USER,
    origin_chain_id=CHAINS[0],
    destination_chain_id=CHAINS[1],
    origin_currency=USDC.lower(),
    destination_currency=USDC.lower(),
    recipient=USER,
    refund_to=REFUND_TO,
    recovery_address=None,
    referrer="app",
)


def test_an_open_arrival_is_priced_for_what_arrived_on_the_addresss_route() -> None:
    assert repriced(OWNER) and not repriced(AddressOwner(**{**OWNER.__dict__, "type": "strict"}))
    request = arrival_request(OWNER, 40 * 10**6)
    assert request.amount == str(40 * 10**6) and request.trade_type == "EXACT_INPUT"
    assert request.refund_to == REFUND_TO and request.recipient == USER
    assert request.use_deposit_address and request.strict is False
    priced = quote(request, with_factory())
    assert priced.split.amount_in == 40 * 10**6


def test_a_transfer_in_another_currency_is_a_mismatch() -> None:
    assert mismatch(OWNER, USDC.upper().replace("0X", "0x")) is None
    assert mismatch(OWNER, NATIVE_EVM_ADDRESS) == DEPOSIT_ADDRESS_MISMATCH


def test_an_arrival_that_cannot_be_priced_says_why() -> None:
    assert unpriced_reason(QuoteError("AMOUNT_TOO_LOW", "too low")) == TOO_LOW
    assert unpriced_reason(QuoteError("INSUFFICIENT_LIQUIDITY", "dry")) == NO_QUOTES


def test_a_child_request_has_ids_of_its_own_made_again_alike() -> None:
    first = child_ids("0x01", "0x02", "0xaa", 3)
    assert first == child_ids("0x01", "0x02", "0xaa", 3)
    assert first != child_ids("0x01", "0x02", "0xaa", -1)
    assert first.request_id != first.order_id
    assert len(first.request_id) == 66 and len(first.order_id) == 66


def test_only_a_strict_transfer_in_the_quoted_currency_has_an_excess() -> None:
    strict = AddressOwner(**{**OWNER.__dict__, "type": "strict"})
    assert excess(strict, 100, USDC.lower(), 130) == 30
    assert excess(strict, 100, USDC.lower(), 100) == 0
    assert excess(strict, 100, USDC.lower(), 60) == 0  # underpaid: refunded whole
    assert excess(strict, 100, NATIVE_EVM_ADDRESS, 130) == 0  # refunded whole
    assert excess(OWNER, 100, USDC.lower(), 130) == 0  # open: the whole amount is priced


def test_dust_fails_as_too_low_or_as_another_currency() -> None:
    strict = AddressOwner(**{**OWNER.__dict__, "type": "strict"})
    assert dust_reason(strict, USDC.lower()) == TOO_LOW
    assert dust_reason(strict, NATIVE_EVM_ADDRESS) == DEPOSIT_ADDRESS_MISMATCH
