"""The wire answer of a withdrawal from the perps exchange: the two steps (authorize, then the
exchange transfer), fees, details and the protocol order (with `orderData`)."""

from __future__ import annotations

from typing import Any

from crossfill.domain.nonce_mapping import NONCE_MAPPING_TYPES, PRIMARY_TYPE
from crossfill.kinds.perps.withdrawal import PerpsWithdrawalQuote
from crossfill.quoting.deposit_steps import amount_wire, service_fee_wire, unsponsored_wire
from crossfill.quoting.money import format_rate, format_units, format_usd
from crossfill.quoting.response import route_leg
from crossfill.quoting.steps import check

SEND_ASSET = "sendAsset"


def _authorize_step(quote: PerpsWithdrawalQuote) -> dict[str, Any]:
    """Signed first: the wallet maps its transfer's nonce to this request. No `check`: the
    official SDK polls a signature item's check until `success`, which only the fill brings."""
    mapping = quote.mapping
    return {
        "id": "authorize",
        "action": "Sign authorization",
        "description": "Authorize the transfer's nonce for this request",
        "kind": "signature",
        "requestId": quote.request_id,
        "depositAddress": "",
        "items": [
            {
                "status": "incomplete",
                "data": {
                    "sign": {
                        "signatureKind": "eip712",
                        "domain": mapping.domain(),
                        "types": NONCE_MAPPING_TYPES,
                        "value": mapping.message(),
                        "primaryType": PRIMARY_TYPE,
                    },
                    "post": {
                        "endpoint": "/authorize",
                        "method": "POST",
                        "body": {
                            "type": "nonce-mapping",
                            "walletChainId": mapping.wallet_chain_id,
                            "wallet": mapping.wallet,
                            "depositor": mapping.depositor,
                            "nonce": mapping.nonce,
                            "id": mapping.request_id,
                            "signatureChainId": mapping.signature_chain_id,
                        },
                    },
                },
            }
        ],
    }


def _deposit_step(
    quote: PerpsWithdrawalQuote, types: dict[str, list[dict[str, str]]], primary_type: str
) -> dict[str, Any]:
    """The exchange transfer the wallet signs and posts to the exchange itself."""
    return {
        "id": "deposit",
        "action": "Confirm transaction in your wallet",
        "description": "Send the funds on the exchange",
        "kind": "transaction",
        "requestId": quote.request_id,
        "depositAddress": "",
        "items": [
            {
                "status": "incomplete",
                "data": {
                    "action": {"type": SEND_ASSET, "parameters": quote.send_asset.wire()},
                    "nonce": quote.nonce,
                    "eip712Types": types,
                    "eip712PrimaryType": primary_type,
                },
                "check": check(quote.request_id),
            }
        ],
    }


def _details(quote: PerpsWithdrawalQuote) -> dict[str, Any]:
    currency_in = amount_wire(quote.currency_in, quote.amount_in)
    currency_out = amount_wire(quote.currency_out, quote.amount_out)
    usd_in = quote.currency_in.usd_micros(quote.amount_in)
    usd_out = quote.currency_out.usd_micros(quote.amount_out)
    fee_usd = quote.currency_in.usd_micros(quote.service_fee)
    impact = usd_out - usd_in
    percent = "0" if usd_in == 0 else format_units(impact * 10_000 // usd_in, 2)
    none = {"usd": "0", "value": "0", "percent": "0"}
    return {
        "operation": "bridge" if quote.is_bridge else "swap",
        "sender": quote.user,
        "recipient": quote.recipient,
        "currencyIn": currency_in,
        "currencyOut": currency_out,
        "refundCurrency": currency_in,
        "currencyGasTopup": None,
        "totalImpact": {"usd": format_usd(impact), "percent": percent},
        "swapImpact": {"usd": format_usd(impact + fee_usd), "percent": "0"},
        "expandedPriceImpact": {
            "swap": {"usd": format_usd(impact + fee_usd)},
            "execution": {"usd": "0"},
            "relay": {"usd": format_usd(-fee_usd)},
            "app": {"usd": "0"},
            "sponsored": {"usd": "0"},
        },
        "rate": format_rate(
            quote.amount_in,
            quote.currency_in.decimals,
            quote.amount_out,
            quote.currency_out.decimals,
        ),
        "slippageTolerance": {"origin": none, "destination": none},
        "timeEstimate": 10,
        "userBalance": "0",
        "fallbackType": None,
        "isFixedRate": True,
        "fixedRateFee": None,
        "route": {
            "origin": route_leg(currency_in, currency_in, ()),
            "destination": route_leg(currency_in, currency_out, ()),
        },
    }


def perps_withdrawal_wire(
    quote: PerpsWithdrawalQuote,
    *,
    send_asset_types: dict[str, list[dict[str, str]]],
    send_asset_primary_type: str,
    depository: str,
) -> dict[str, Any]:
    """The quote's answer; `depository` is where the input is paid (the solver's account)."""
    fees = service_fee_wire(quote.currency_in, quote.service_fee)
    return {
        "steps": [
            _authorize_step(quote),
            _deposit_step(quote, send_asset_types, send_asset_primary_type),
        ],
        "fees": fees,
        # Nothing of a withdrawal is sponsored: the user pays the service fee.
        "feeSponsorship": unsponsored_wire(quote.currency_in, quote.service_fee),
        "details": _details(quote),
        "protocol": {
            "v2": {
                "orderId": quote.order_id,
                "hubType": "onchain",
                "orderData": quote.order.wire(),
                "paymentDetails": {
                    "chainId": quote.order.inputs[0].chain_id,
                    "depository": depository,
                    "currency": quote.currency_in.address,
                    "amount": str(quote.amount_in),
                },
            }
        },
    }
