"""The wire answer of a withdrawal from the perps exchange: the two steps (authorize, then the
exchange transfer), fees, details and the protocol order (with `orderData`)."""

from __future__ import annotations

from typing import Any

from crossfill.domain.nonce_mapping import NONCE_MAPPING_TYPES, PRIMARY_TYPE
from crossfill.kinds.perps.withdrawal import PerpsWithdrawalQuote
from crossfill.quoting.cross_vm import TransferTerms
from crossfill.quoting.deposit_steps import transfer_answer, transfer_details
from crossfill.quoting.money import format_units, format_usd
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


def _impacts(terms: TransferTerms) -> dict[str, Any]:
    """The transfer's price impacts: all of it the swap's, the service fee the relay's."""
    usd_in = terms.currency_in.usd_micros(terms.amount_in)
    usd_out = terms.currency_out.usd_micros(terms.amount_out)
    fee_usd = terms.currency_in.usd_micros(terms.service_fee)
    impact = usd_out - usd_in
    percent = "0" if usd_in == 0 else format_units(impact * 10_000 // usd_in, 2)
    return {
        "totalImpact": {"usd": format_usd(impact), "percent": percent},
        "swapImpact": {"usd": format_usd(impact + fee_usd), "percent": "0"},
        "expandedPriceImpact": {
            "swap": {"usd": format_usd(impact + fee_usd)},
            "execution": {"usd": "0"},
            "relay": {"usd": format_usd(-fee_usd)},
            "app": {"usd": "0"},
            "sponsored": {"usd": "0"},
        },
    }


def perps_withdrawal_wire(
    quote: PerpsWithdrawalQuote,
    *,
    send_asset_types: dict[str, list[dict[str, str]]],
    send_asset_primary_type: str,
    depository: str,
    user_balance: int | None = None,
) -> dict[str, Any]:
    """The quote's answer; `depository` is where the input is paid (the solver's account),
    `user_balance` the user's perps USDC on the exchange."""
    terms = quote.terms
    details = transfer_details(
        terms,
        operation="bridge" if terms.is_bridge else "swap",
        time_estimate_seconds=10,
        impacts=_impacts(terms),
        fixed_rate_fee=None,
        destination_from_input=True,
        user_balance=user_balance,
    )
    steps = [
        _authorize_step(quote),
        _deposit_step(quote, send_asset_types, send_asset_primary_type),
    ]
    payment = (quote.order.inputs[0].chain_id, depository)
    return transfer_answer(quote, steps=steps, details=details, payment=payment)
