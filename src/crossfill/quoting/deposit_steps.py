"""The EVM origin's steps of a quote that another kind of chain fills (the SVM chain, the
perps exchange): approve and `depositErc20`, or `depositNative`, with the order id; and the
currency and amount objects of such a quote's answer."""

from __future__ import annotations

from typing import Any, Protocol

from crossfill.config import ChainConfig
from crossfill.contracts import calldata
from crossfill.quoting.money import format_units, format_usd
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
