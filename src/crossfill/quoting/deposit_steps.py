"""The answer's parts shared by quotes that cross to another kind of chain (the SVM chain,
the perps exchange): the EVM origin's steps (approve and `depositErc20`, or `depositNative`,
with the order id), the currency and amount objects, and `details` in the full shape the
request records read (route, rate, impacts), for a fixed-rate transfer priced in USD."""

from __future__ import annotations

from typing import Any, Protocol

from crossfill.config import ChainConfig
from crossfill.contracts import calldata
from crossfill.quoting.cross_vm import QuotedCurrency
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
    `PerpsDepositQuote`, `PerpsWithdrawalQuote`)."""

    @property
    def request_id(self) -> str: ...

    @property
    def order_id(self) -> str: ...

    @property
    def user(self) -> str: ...

    @property
    def currency_in(self) -> QuotedCurrency: ...

    @property
    def amount_in(self) -> int: ...

    @property
    def recipient(self) -> str: ...

    @property
    def currency_out(self) -> QuotedCurrency: ...

    @property
    def amount_out(self) -> int: ...


class DepositQuote(QuotedTransfer, Protocol):
    """What the steps read of a quote (`SvmQuote`, `PerpsDepositQuote`)."""

    @property
    def service_fee(self) -> int: ...


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
    quote: DepositQuote, step_id: str, description: str, data: dict[str, Any]
) -> dict[str, Any]:
    item = {"status": "incomplete", "data": data, "check": check(quote.request_id)}
    return transaction_step(quote.request_id, step_id, description, item)


def evm_deposit_steps(quote: DepositQuote, origin: ChainConfig) -> list[dict[str, Any]]:
    depository = origin.contracts.depository
    order_id = bytes.fromhex(quote.order_id[2:])

    def item(to: str, data: bytes, value: int) -> dict[str, Any]:
        return {"from": quote.user, "to": to.lower(), "data": calldata.hex_data(data),
                "value": str(value), "chainId": origin.id}  # fmt: skip

    currency = quote.currency_in
    if currency.is_native:
        deposit = calldata.deposit_native(calldata.SENDER_DEPOSITS, order_id)
        return [
            step(quote, "deposit", "Depositing funds", item(depository, deposit, quote.amount_in))
        ]
    approve = calldata.erc20_approve(depository, quote.amount_in)
    deposit = calldata.deposit_erc20(
        calldata.SENDER_DEPOSITS, currency.address, quote.amount_in, order_id
    )
    approval = step(quote, "approve", "Approve the deposit", item(currency.address, approve, 0))
    del approval["items"][0]["check"]
    return [approval, step(quote, "deposit", "Depositing funds", item(depository, deposit, 0))]


def service_fee_wire(
    currency: QuotedCurrency, service_fee: int, *, gas: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`fees` of a fixed-rate transfer: the service fee, in the input currency, is all the
    relayer charges; `gas` is the user's own fee for the deposit when the quote prices it."""
    fee = amount_wire(currency, service_fee)
    zero = amount_wire(currency, 0)
    return {
        "gas": zero if gas is None else gas,
        "relayer": fee,
        "relayerGas": zero,
        "relayerService": fee,
        "app": zero,
        "subsidized": zero,
    }


def unsponsored_wire(currency: QuotedCurrency, service_fee: int) -> dict[str, Any]:
    """`feeSponsorship` of a transfer no one sponsors: the user pays the service fee."""
    return fee_sponsorship_wire(
        NOT_SPONSORED, fees=service_fee, amount=lambda value: amount_wire(currency, value)
    )


def details_wire(
    quote: DepositQuote, *, operation: str, time_estimate_seconds: int, fixed: bool = False
) -> dict[str, Any]:
    """`details` of a transfer without a swap, in the EVM quote's shape and meaning: the
    service fee is the only price impact (the rate is fixed at quote time)."""
    currency_in = amount_wire(quote.currency_in, quote.amount_in)
    currency_out = amount_wire(quote.currency_out, quote.amount_out)
    usd = UsdBreakdown.without_swap(
        quote.currency_in.usd_micros(quote.amount_in),
        quote.currency_out.usd_micros(quote.amount_out),
    )
    return {
        "operation": operation,
        "sender": quote.user,
        "recipient": quote.recipient,
        "currencyIn": currency_in,
        "currencyOut": currency_out,
        "refundCurrency": currency_in,
        "currencyGasTopup": None,
        **impacts_wire(usd),
        "rate": format_rate(
            quote.amount_in,
            quote.currency_in.decimals,
            quote.amount_out,
            quote.currency_out.decimals,
        ),
        "slippageTolerance": no_slippage(),
        "timeEstimate": time_estimate_seconds,
        "userBalance": "0",
        "fallbackType": None,
        "isFixedRate": True,
        "fixedRateFee": fixed_rate_fee_wire(usd, fixed=fixed),
        "route": {
            "origin": route_leg(currency_in, currency_in, ()),
            "destination": route_leg(currency_out, currency_out, ()),
        },
    }
