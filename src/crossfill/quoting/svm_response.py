"""The wire answer of an SVM quote: steps, fees, fee sponsorship, details and the protocol
order, in the shape and with the meaning of an EVM bridge's (`quoting.response` builds the
parts they share)."""

from __future__ import annotations

from typing import Any

from crossfill.chains.svm_transactions import instruction_wire
from crossfill.config import ChainConfig
from crossfill.contracts import calldata
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
from crossfill.quoting.steps import check
from crossfill.quoting.svm_quote import QuotedCurrency, SvmQuote

# The SVM payer's usual time from a confirmed EVM deposit to the landed payment, in seconds.
SVM_FILL_SECONDS = 10


def _currency(currency: QuotedCurrency) -> dict[str, Any]:
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


def _amount(quote: SvmQuote, currency: QuotedCurrency, amount: int) -> dict[str, Any]:
    return {
        "currency": _currency(currency),
        "amount": str(amount),
        "amountFormatted": format_units(amount, currency.decimals),
        "amountUsd": format_usd(quote.usd_micros(currency, amount)),
        "minimumAmount": str(amount),
    }


def _step(quote: SvmQuote, step_id: str, description: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": step_id,
        "action": "Confirm transaction in your wallet",
        "description": description,
        "kind": "transaction",
        "requestId": quote.request_id,
        "depositAddress": "",
        "items": [{"status": "incomplete", "data": data, "check": check(quote.request_id)}],
    }


def _evm_steps(quote: SvmQuote, origin: ChainConfig) -> list[dict[str, Any]]:
    depository = origin.contracts.depository
    order_id = bytes.fromhex(quote.order_id[2:])

    def item(to: str, data: bytes, value: int) -> dict[str, Any]:
        return {"from": quote.user, "to": to.lower(), "data": calldata.hex_data(data),
                "value": str(value), "chainId": origin.id}  # fmt: skip

    currency = quote.currency_in
    if currency.is_native:
        deposit = calldata.deposit_native(calldata.SENDER_DEPOSITS, order_id)
        return [
            _step(quote, "deposit", "Depositing funds", item(depository, deposit, quote.amount_in))
        ]
    approve = calldata.erc20_approve(depository, quote.amount_in)
    deposit = calldata.deposit_erc20(
        calldata.SENDER_DEPOSITS, currency.address, quote.amount_in, order_id
    )
    approval = _step(quote, "approve", "Approve the deposit", item(currency.address, approve, 0))
    del approval["items"][0]["check"]
    return [approval, _step(quote, "deposit", "Depositing funds", item(depository, deposit, 0))]


def _svm_steps(quote: SvmQuote) -> list[dict[str, Any]]:
    assert quote.deposit_instructions is not None
    data = {
        "instructions": [instruction_wire(ix) for ix in quote.deposit_instructions],
        "addressLookupTableAddresses": [],
        "chainId": quote.currency_in.chain_id,
        "from": quote.user,
        # The transaction's fee payer (`depositFeePayer`, else the user): it signs as well.
        "feePayer": quote.fee_payer,
    }
    return [_step(quote, "deposit", "Depositing funds", data)]


def _details(quote: SvmQuote, evm: ChainConfig) -> dict[str, Any]:
    currency_in = _amount(quote, quote.currency_in, quote.amount_in)
    currency_out = _amount(quote, quote.currency_out, quote.amount_out)
    # No swap: what the solver pays on the destination is the output itself.
    usd = UsdBreakdown.without_swap(
        quote.usd_micros(quote.currency_in, quote.amount_in),
        quote.usd_micros(quote.currency_out, quote.amount_out),
    )
    return {
        "operation": "bridge",
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
        "timeEstimate": (
            evm.fees.fill_time_estimate_seconds
            if quote.direction == "from_svm"
            else SVM_FILL_SECONDS
        ),
        "userBalance": "0",
        "fallbackType": None,
        "isFixedRate": True,
        "fixedRateFee": fixed_rate_fee_wire(usd, fixed=quote.fixed_rate_bps is not None),
        "route": {
            "origin": route_leg(currency_in, currency_in, ()),
            "destination": route_leg(currency_out, currency_out, ()),
        },
    }


def svm_quote_wire(
    quote: SvmQuote, evm: ChainConfig, *, order_signature: str | None = None
) -> dict[str, Any]:
    steps = _evm_steps(quote, evm) if quote.direction == "to_svm" else _svm_steps(quote)
    fee = _amount(quote, quote.currency_in, quote.service_fee)
    zero = _amount(quote, quote.currency_in, 0)
    depository = evm.contracts.depository if quote.direction == "to_svm" else quote.vault
    protocol: dict[str, Any] = {
        "orderId": quote.order_id,
        "hubType": "onchain",
        "orderData": quote.order.wire(),
        "paymentDetails": {
            "chainId": quote.currency_in.chain_name,
            "depository": depository,
            "currency": quote.currency_in.address,
            "amount": str(quote.amount_in),
        },
    }
    if order_signature is not None:
        protocol["orderSignature"] = order_signature
    return {
        "steps": steps,
        "fees": {
            "gas": _amount(quote, quote.gas_currency, quote.deposit_gas),
            "relayer": fee,
            "relayerGas": zero,
            "relayerService": fee,
            "app": zero,
            "subsidized": zero,
        },
        # Nothing is sponsored on SVM routes (`subsidizeFees` is refused there).
        "feeSponsorship": fee_sponsorship_wire(
            NOT_SPONSORED,
            fees=quote.service_fee,
            amount=lambda value: _amount(quote, quote.currency_in, value),
        ),
        "details": _details(quote, evm),
        "protocol": {"v2": protocol},
    }
