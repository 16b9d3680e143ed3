"""The answer's parts shared by quotes that cross to another kind of chain (the SVM chain,
the perps exchange): the EVM origin's steps (approve and `depositErc20`, or `depositNative`,
with the order id), the currency and amount objects, and `details` in the full shape the
request records read (route, rate, impacts), for a fixed-rate transfer priced in USD."""

from __future__ import annotations

from typing import Any, Protocol

from crossfill.config import ChainConfig
from crossfill.contracts import calldata
from crossfill.quoting.money import format_rate, format_units, format_usd
from crossfill.quoting.steps import check
from crossfill.quoting.svm_quote import QuotedCurrency


class DepositQuote(Protocol):
    """What the steps read of a quote (`SvmQuote`, `PerpsDepositQuote`)."""

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

    @property
    def service_fee(self) -> int: ...

    def usd_micros(self, currency: QuotedCurrency, amount: int) -> int: ...


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


def amount_wire(quote: DepositQuote, currency: QuotedCurrency, amount: int) -> dict[str, Any]:
    return {
        "currency": currency_wire(currency),
        "amount": str(amount),
        "amountFormatted": format_units(amount, currency.decimals),
        "amountUsd": format_usd(quote.usd_micros(currency, amount)),
        "minimumAmount": str(amount),
    }


def step(
    quote: DepositQuote, step_id: str, description: str, data: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": step_id,
        "action": "Confirm transaction in your wallet",
        "description": description,
        "kind": "transaction",
        "requestId": quote.request_id,
        "depositAddress": "",
        "items": [{"status": "incomplete", "data": data, "check": check(quote.request_id)}],
    }


def evm_deposit_steps(quote: DepositQuote, origin: ChainConfig) -> list[dict[str, Any]]:
    depository = origin.contracts.depository
    order_id = bytes.fromhex(quote.order_id[2:])

    def item(to: str, data: bytes, value: int) -> dict[str, Any]:
        return {"from": quote.user, "to": to.lower(), "data": calldata.hex_data(data),
                "value": str(value), "chainId": origin.id}  # fmt: skip

    currency = quote.currency_in
    if currency.is_native:
        deposit = calldata.deposit_native(quote.user, order_id)
        return [
            step(quote, "deposit", "Depositing funds", item(depository, deposit, quote.amount_in))
        ]
    approve = calldata.erc20_approve(depository, quote.amount_in)
    deposit = calldata.deposit_erc20(quote.user, currency.address, quote.amount_in, order_id)
    approval = step(quote, "approve", "Approve the deposit", item(currency.address, approve, 0))
    del approval["items"][0]["check"]
    return [approval, step(quote, "deposit", "Depositing funds", item(depository, deposit, 0))]


SERVICE_ROUTER = "crossfill"
_NO_SLIPPAGE = {"usd": "0", "value": "0", "percent": "0"}


def _percent(part_micros: int, whole_micros: int) -> str:
    """A signed percentage with two decimals, from integer micro-USD."""
    if whole_micros == 0:
        return "0"
    return format_units(part_micros * 10_000 // whole_micros, 2)


def _route_leg(input_amount: dict[str, Any], output_amount: dict[str, Any]) -> dict[str, Any]:
    return {
        "inputCurrency": input_amount,
        "outputCurrency": output_amount,
        "router": SERVICE_ROUTER,
        "includedSwapSources": [],
    }


def details_wire(
    quote: DepositQuote, *, operation: str, time_estimate_seconds: int
) -> dict[str, Any]:
    """`details`: the service fee is the only price impact (the rate is fixed at quote time)."""
    currency_in = amount_wire(quote, quote.currency_in, quote.amount_in)
    currency_out = amount_wire(quote, quote.currency_out, quote.amount_out)
    fee_usd = quote.usd_micros(quote.currency_in, quote.service_fee)
    in_usd = quote.usd_micros(quote.currency_in, quote.amount_in)
    zero = {"usd": "0"}
    return {
        "operation": operation,
        "sender": quote.user,
        "recipient": quote.recipient,
        "currencyIn": currency_in,
        "currencyOut": currency_out,
        "refundCurrency": currency_in,
        "currencyGasTopup": None,
        "totalImpact": {"usd": format_usd(-fee_usd), "percent": _percent(-fee_usd, in_usd)},
        "swapImpact": {"usd": "0", "percent": "0"},
        "expandedPriceImpact": {
            "swap": zero,
            "execution": zero,
            "relay": {"usd": format_usd(-fee_usd)},
            "app": zero,
            "sponsored": zero,
        },
        "rate": format_rate(
            quote.amount_in,
            quote.currency_in.decimals,
            quote.amount_out,
            quote.currency_out.decimals,
        ),
        "slippageTolerance": {"origin": _NO_SLIPPAGE, "destination": _NO_SLIPPAGE},
        "timeEstimate": time_estimate_seconds,
        "userBalance": "0",
        "fallbackType": None,
        "isFixedRate": True,
        "fixedRateFee": None,
        "route": {
            "origin": _route_leg(currency_in, currency_in),
            "destination": _route_leg(currency_in, currency_out),
        },
    }
