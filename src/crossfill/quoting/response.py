"""The quote's wire shape (spec "Quote response")."""

from __future__ import annotations

from typing import Any

from crossfill.config import ChainConfig, CurrencyConfig
from crossfill.contracts import calldata
from crossfill.quoting.engine import BridgeQuote
from crossfill.quoting.money import format_units, format_usd

SERVICE_ROUTER = "crossfill"


def currency_wire(chain: ChainConfig, currency: CurrencyConfig) -> dict[str, Any]:
    return {
        "chainId": chain.id,
        "address": currency.address.lower(),
        "symbol": currency.symbol,
        "name": currency.name,
        "decimals": currency.decimals,
        "metadata": {
            "logoURI": currency.logo_uri,
            "verified": currency.verified,
            "isNative": currency.is_native,
        },
    }


def amount_wire(
    chain: ChainConfig,
    currency: CurrencyConfig,
    amount: int,
    usd_micros: int,
    minimum: int | None = None,
) -> dict[str, Any]:
    return {
        "currency": currency_wire(chain, currency),
        "amount": str(amount),
        "amountFormatted": format_units(amount, currency.decimals),
        "amountUsd": format_usd(usd_micros),
        "minimumAmount": str(amount if minimum is None else minimum),
    }


def _in(quote: BridgeQuote, amount: int) -> dict[str, Any]:
    return amount_wire(
        quote.origin, quote.currency_in, amount, quote.usd_micros(quote.currency_in, amount)
    )


def _out(quote: BridgeQuote, amount: int) -> dict[str, Any]:
    return amount_wire(
        quote.destination, quote.currency_out, amount, quote.usd_micros(quote.currency_out, amount)
    )


def _percent(part_micros: int, whole_micros: int) -> str:
    """A signed percentage with two decimals, from integer micro-USD."""
    if whole_micros == 0:
        return "0"
    hundredths = part_micros * 10_000 // whole_micros
    return format_units(hundredths, 2)


def check(request_id: str) -> dict[str, str]:
    return {"endpoint": f"/intents/status/v3?requestId={request_id}", "method": "GET"}


def _transaction_item(
    quote: BridgeQuote, to: str, data: bytes, value: int, with_check: bool
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "status": "incomplete",
        "data": {
            "from": quote.user,
            "to": to.lower(),
            "data": calldata.hex_data(data),
            "value": str(value),
            "chainId": quote.origin.id,
        },
    }
    if with_check:
        item["check"] = check(quote.request_id)
    return item


def _step(
    quote: BridgeQuote, step_id: str, description: str, item: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": step_id,
        "action": "Confirm transaction in your wallet",
        "description": description,
        "kind": "transaction",
        "requestId": quote.request_id,
        "depositAddress": "",
        "items": [item],
    }


def _deposit_call(quote: BridgeQuote) -> tuple[str, bytes, int]:
    order_id = bytes.fromhex(quote.order_id[2:])
    amount = quote.amounts.amount_in
    depository = quote.origin.contracts.depository
    if quote.currency_in.is_native:
        return depository, calldata.deposit_native(quote.user, order_id), amount
    if not quote.explicit_deposit:
        return (
            quote.currency_in.address,
            calldata.erc20_transfer_tagged(depository, amount, order_id),
            0,
        )
    return (
        depository,
        calldata.deposit_erc20(quote.user, quote.currency_in.address, amount, order_id),
        0,
    )


def steps(quote: BridgeQuote, *, allowance: int | None) -> list[dict[str, Any]]:
    """`approve` only when an explicit ERC-20 deposit needs more allowance than there is."""
    result: list[dict[str, Any]] = []
    needs_approval = (
        not quote.currency_in.is_native
        and quote.explicit_deposit
        and (allowance is None or allowance < quote.amounts.amount_in)
    )
    if needs_approval:
        approve = calldata.erc20_approve(quote.origin.contracts.depository, quote.amounts.amount_in)
        result.append(
            _step(
                quote,
                "approve",
                f"Sign an approval for {quote.currency_in.symbol}",
                _transaction_item(quote, quote.currency_in.address, approve, 0, with_check=False),
            )
        )
    to, data, value = _deposit_call(quote)
    result.append(
        _step(
            quote,
            "deposit",
            f"Depositing {quote.currency_in.symbol} to bridge to chain {quote.destination.id}",
            _transaction_item(quote, to, data, value, with_check=True),
        )
    )
    return result


def _fees(quote: BridgeQuote) -> dict[str, Any]:
    amounts = quote.amounts
    native = quote.origin.native_currency
    return {
        "gas": amount_wire(
            quote.origin,
            native,
            quote.deposit_gas_wei,
            quote.usd_micros(native, quote.deposit_gas_wei),
        ),
        "relayer": _in(quote, amounts.relayer),
        "relayerGas": _in(quote, amounts.relayer_gas),
        "relayerService": _in(quote, amounts.relayer_service),
        "app": _in(quote, 0),
        "subsidized": _in(quote, 0),
    }


def _details(quote: BridgeQuote, user_balance: int | None) -> dict[str, Any]:
    amounts = quote.amounts
    in_usd = quote.usd_micros(quote.currency_in, amounts.amount_in)
    fees_usd = quote.usd_micros(quote.currency_in, amounts.relayer)
    currency_in = _in(quote, amounts.amount_in)
    currency_out = _out(quote, amounts.amount_out)
    no_slippage = {"usd": "0", "value": "0", "percent": "0"}
    return {
        "operation": "bridge",
        "sender": quote.user,
        "recipient": quote.recipient,
        "currencyIn": currency_in,
        "currencyOut": currency_out,
        "refundCurrency": currency_in,
        "totalImpact": {"usd": format_usd(-fees_usd), "percent": _percent(-fees_usd, in_usd)},
        "swapImpact": {"usd": "0", "percent": "0"},
        "expandedPriceImpact": {
            "swap": {"usd": "0"},
            "execution": {
                "usd": format_usd(-quote.usd_micros(quote.currency_in, amounts.relayer_gas))
            },
            "relay": {
                "usd": format_usd(-quote.usd_micros(quote.currency_in, amounts.relayer_service))
            },
            "app": {"usd": "0"},
            "sponsored": {"usd": "0"},
        },
        # Output per unit of input, in whole units (same asset: just under 1).
        "rate": format_units(amounts.amount_out * 10**18 // amounts.amount_in, 18),
        "slippageTolerance": {"origin": no_slippage, "destination": no_slippage},
        "timeEstimate": quote.destination.fees.fill_time_estimate_seconds,
        "userBalance": "0" if user_balance is None else str(user_balance),
        "isFixedRate": True,
        "route": {
            "origin": _route_leg(currency_in, currency_in),
            "destination": _route_leg(currency_out, currency_out),
        },
    }


def _route_leg(input_amount: dict[str, Any], output_amount: dict[str, Any]) -> dict[str, Any]:
    return {
        "inputCurrency": input_amount,
        "outputCurrency": output_amount,
        "router": SERVICE_ROUTER,
        "includedSwapSources": [],
    }


def _fee_sponsorship(quote: BridgeQuote) -> dict[str, Any]:
    return {
        "quoted": {
            "selectedComponents": [],
            "capHit": False,
            "components": {},
            "sponsoredTotal": _in(quote, 0),
            "userPaysTotal": _in(quote, quote.amounts.relayer),
        }
    }


def quote_wire(
    quote: BridgeQuote,
    *,
    allowance: int | None,
    user_balance: int | None,
    order_signature: str | None = None,
) -> dict[str, Any]:
    protocol: dict[str, Any] = {
        "orderId": quote.order_id,
        "hubType": "onchain",
        "orderData": quote.order.wire(),
        "paymentDetails": {
            "chainId": quote.origin.protocol_name,
            "depository": quote.origin.contracts.depository,
            "currency": quote.currency_in.address.lower(),
            "amount": str(quote.amounts.amount_in),
        },
    }
    if order_signature is not None:
        protocol["orderSignature"] = order_signature
    return {
        "steps": steps(quote, allowance=allowance),
        "fees": _fees(quote),
        "feeSponsorship": _fee_sponsorship(quote),
        "details": _details(quote, user_balance),
        "protocol": {"v2": protocol},
    }
