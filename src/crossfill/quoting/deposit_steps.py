"""The answer to a quote that crosses to another kind of chain (the SVM chain, the perps
exchange), for a fixed-rate transfer priced in USD: the EVM origin's steps (approve and
`depositErc20`, or `depositNative`, with the order id), the currency and amount objects, the
fees, `details` in the full shape the request records read (route, rate, impacts), and the
answer around them with its protocol order (`transfer_answer`)."""

from __future__ import annotations

from typing import Any, Protocol

from crossfill.contracts import calldata
from crossfill.domain.order import Order
from crossfill.kinds.evm.config import ChainConfig
from crossfill.quoting.cross_vm import QuotedCurrency, TransferTerms
from crossfill.quoting.money import format_rate, format_units, format_usd
from crossfill.quoting.response import (
    UsdBreakdown,
    fee_sponsorship_wire,
    fixed_rate_fee_wire,
    impacts_wire,
    no_slippage,
    route_leg,
)
from crossfill.quoting.sponsorship import NONE as NOT_SPONSORED
from crossfill.quoting.steps import check, transaction_step


class QuotedTransfer(Protocol):
    """What every quote crossing to another kind of chain has (`SvmQuote`,
    `PerpsDepositQuote`, `PerpsWithdrawalQuote`): its ids and the transfer it quotes."""

    @property
    def request_id(self) -> str: ...

    @property
    def order_id(self) -> str: ...

    @property
    def order(self) -> Order: ...

    @property
    def terms(self) -> TransferTerms: ...


def currency_wire(currency: QuotedCurrency) -> dict[str, Any]:
    return {
        "chainId": currency.chain_id,
        "address": currency.address,
        "symbol": currency.symbol,
        "name": currency.name,
        "decimals": currency.decimals,
        "metadata": {
            "logoURI": currency.logo_uri,
            "verified": True,
            "isNative": currency.is_native,
        },
    }


def amount_wire(currency: QuotedCurrency, amount: int) -> dict[str, Any]:
    """`amount` of `currency`, valued at its quoted price (rounded down)."""
    return {
        "currency": currency_wire(currency),
        "amount": str(amount),
        "amountFormatted": format_units(amount, currency.decimals),
        "amountUsd": format_usd(currency.usd_micros(amount)),
        "minimumAmount": str(amount),
    }


def step(
    quote: QuotedTransfer, step_id: str, description: str, data: dict[str, Any]
) -> dict[str, Any]:
    item = {"status": "incomplete", "data": data, "check": check(quote.request_id)}
    return transaction_step(quote.request_id, step_id, description, item)


def evm_deposit_steps(quote: QuotedTransfer, origin: ChainConfig) -> list[dict[str, Any]]:
    depository = origin.contracts.depository
    order_id = bytes.fromhex(quote.order_id[2:])

    def item(to: str, data: bytes, value: int) -> dict[str, Any]:
        return {"from": quote.terms.user, "to": to.lower(), "data": calldata.hex_data(data),
                "value": str(value), "chainId": origin.id}  # fmt: skip

    currency = quote.terms.currency_in
    if currency.is_native:
        deposit = calldata.deposit_native(calldata.SENDER_DEPOSITS, order_id)
        return [
            step(
                quote,
                "deposit",
                "Depositing funds",
                item(depository, deposit, quote.terms.amount_in),
            )
        ]
    approve = calldata.erc20_approve(depository, quote.terms.amount_in)
    deposit = calldata.deposit_erc20(
        calldata.SENDER_DEPOSITS, currency.address, quote.terms.amount_in, order_id
    )
    approval = step(quote, "approve", "Approve the deposit", item(currency.address, approve, 0))
    del approval["items"][0]["check"]
    return [approval, step(quote, "deposit", "Depositing funds", item(depository, deposit, 0))]


def service_fee_wire(terms: TransferTerms, *, gas: dict[str, Any] | None = None) -> dict[str, Any]:
    """`fees` of a fixed-rate transfer: the service fee, in the input currency, is all the
    relayer charges; `gas` is the user's own fee for the deposit when the quote prices it."""
    fee = amount_wire(terms.currency_in, terms.service_fee)
    zero = amount_wire(terms.currency_in, 0)
    return {
        "gas": zero if gas is None else gas,
        "relayer": fee,
        "relayerGas": zero,
        "relayerService": fee,
        "app": zero,
        "subsidized": zero,
    }


def unsponsored_wire(terms: TransferTerms) -> dict[str, Any]:
    """`feeSponsorship` of a transfer no one sponsors: the user pays the service fee."""
    return fee_sponsorship_wire(
        NOT_SPONSORED,
        fees=terms.service_fee,
        amount=lambda value: amount_wire(terms.currency_in, value),
    )


def details_wire(
    quote: QuotedTransfer,
    *,
    operation: str,
    time_estimate_seconds: int,
    fixed: bool = False,
    user_balance: int | None = None,
) -> dict[str, Any]:
    """`details` of a transfer without a swap, in the EVM quote's shape and meaning: the
    service fee is the only price impact (the rate is fixed at quote time)."""
    terms = quote.terms
    usd = UsdBreakdown.without_swap(
        terms.currency_in.usd_micros(terms.amount_in),
        terms.currency_out.usd_micros(terms.amount_out),
    )
    return transfer_details(
        terms,
        operation=operation,
        time_estimate_seconds=time_estimate_seconds,
        impacts=impacts_wire(usd),
        fixed_rate_fee=fixed_rate_fee_wire(usd, fixed=fixed),
        user_balance=user_balance,
    )


def transfer_details(
    terms: TransferTerms,
    *,
    operation: str,
    time_estimate_seconds: int,
    impacts: dict[str, Any],
    fixed_rate_fee: dict[str, str] | None,
    destination_from_input: bool = False,
    user_balance: int | None = None,
) -> dict[str, Any]:
    """`details` of a fixed-rate transfer, its price `impacts` as its kind states them. The
    route's destination leg starts from the output currency, or from the input's where
    `destination_from_input` (as a withdrawal from the exchange shows it). `user_balance`: the
    user's balance of the input currency on the origin ("0" when unknown, as EVM quotes show
    it)."""
    currency_in = amount_wire(terms.currency_in, terms.amount_in)
    currency_out = amount_wire(terms.currency_out, terms.amount_out)
    return {
        "operation": operation,
        "sender": terms.user,
        "recipient": terms.recipient,
        "currencyIn": currency_in,
        "currencyOut": currency_out,
        "refundCurrency": currency_in,
        "currencyGasTopup": None,
        **impacts,
        "rate": format_rate(
            terms.amount_in,
            terms.currency_in.decimals,
            terms.amount_out,
            terms.currency_out.decimals,
        ),
        "slippageTolerance": no_slippage(),
        "timeEstimate": time_estimate_seconds,
        "userBalance": "0" if user_balance is None else str(user_balance),
        "fallbackType": None,
        "isFixedRate": True,
        "fixedRateFee": fixed_rate_fee,
        "route": {
            "origin": route_leg(currency_in, currency_in, ()),
            "destination": route_leg(
                currency_in if destination_from_input else currency_out, currency_out, ()
            ),
        },
    }


def transfer_answer(
    quote: QuotedTransfer,
    *,
    steps: list[dict[str, Any]],
    details: dict[str, Any],
    payment: tuple[str, str],
    gas: dict[str, Any] | None = None,
    order_signature: str | None = None,
) -> dict[str, Any]:
    """The answer to a quote crossing to another kind of chain: its `steps`, its fees (the
    service fee, and the user's `gas` when priced), sponsored by no one, its `details`, and the
    protocol order, its input paid on (chain id, depository) `payment`."""
    chain_id, depository = payment
    terms = quote.terms
    protocol: dict[str, Any] = {
        "orderId": quote.order_id,
        "hubType": "onchain",
        "orderData": quote.order.wire(),
        "paymentDetails": {
            "chainId": chain_id,
            "depository": depository,
            "currency": terms.currency_in.address,
            "amount": str(terms.amount_in),
        },
    }
    if order_signature is not None:
        protocol["orderSignature"] = order_signature
    return {
        "steps": steps,
        "fees": service_fee_wire(terms, gas=gas),
        # Nothing of a transfer to or from another kind of chain is sponsored.
        "feeSponsorship": unsponsored_wire(terms),
        "details": details,
        "protocol": {"v2": protocol},
    }
