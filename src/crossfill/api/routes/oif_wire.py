"""The OIF bodies turned into Crossfill's terms and back: a quote request into `app.oif`'s
swap terms, an offer into an OIF quote, a submitted order into the gasless ERC-7683 order,
and an order's request into OIF's order answer. A body Crossfill cannot serve as asked is a
422 with a code saying what (`errors.Unprocessable`); a malformed one a 400."""

from __future__ import annotations

from typing import Any

from crossfill.api.schemas.oif import OifGetQuoteRequest, OifPostOrderRequest
from crossfill.app.oif import OrderOffer, OrderRecord, SwapTerms
from crossfill.domain import erc7930
from crossfill.domain.erc7683 import CrossfillOrderData
from crossfill.domain.erc7683_gasless import PRIMARY_TYPE, GaslessOrder
from crossfill.domain.oif import (
    ESCROW_ORDER,
    PROVIDER,
    REFUND_AUTOMATIC,
    OrderRefused,
    escrow_order,
    order_status,
)
from crossfill.domain.status import RequestStatus
from crossfill.errors import BadRequest, Unprocessable
from crossfill.store import requests

UINT256_MAX = 2**256 - 1


def _interop(text: str, field: str) -> erc7930.InteropAddress:
    try:
        return erc7930.parse(text)
    except erc7930.NotInteroperable as exc:
        raise BadRequest(f"{field}: {exc}", error_code="INVALID_ADDRESS") from None


def _amount(text: str, field: str) -> int:
    value = int(text)
    if not 0 < value <= UINT256_MAX:
        raise BadRequest(f"{field}: must be a positive uint256", error_code="INVALID_AMOUNT")
    return value


def swap_terms(body: OifGetQuoteRequest) -> SwapTerms:
    """What `body` asks, as Crossfill serves it: one exact input for one output, refunds to
    the input's user, an escrow order."""
    intent = body.intent
    if len(intent.inputs) != 1 or len(intent.outputs) != 1:
        raise Unprocessable(
            "one input and one output per intent are served", error_code="UNSUPPORTED_INTENT"
        )
    if intent.swapType != "exact-input":
        raise Unprocessable("only exact-input swaps are served", error_code="UNSUPPORTED_SWAP_TYPE")
    if ESCROW_ORDER not in body.supportedTypes:
        raise Unprocessable(
            f"Crossfill's orders are {ESCROW_ORDER}; supportedTypes does not list it",
            error_code="UNSUPPORTED_ORDER_TYPE",
        )
    if intent.failureHandling is not None and REFUND_AUTOMATIC not in intent.failureHandling:
        raise Unprocessable(
            f"Crossfill refunds automatically; failureHandling does not list {REFUND_AUTOMATIC}",
            error_code="UNSUPPORTED_FAILURE_HANDLING",
        )
    (given,), (wanted,) = intent.inputs, intent.outputs
    if given.lock is not None:
        raise Unprocessable(
            f"inputs[0].lock: {given.lock.kind} locks are not taken; Crossfill escrows the "
            "input in its Depository",
            error_code="UNSUPPORTED_LOCK_TYPE",
        )
    if wanted.calldata not in (None, "", "0x"):
        raise Unprocessable("outputs[0].calldata is not served", error_code="UNSUPPORTED_CALLDATA")
    if given.amount is None:
        raise BadRequest("inputs[0].amount is required for an exact-input swap")
    user = _interop(body.user, "user")
    if _interop(given.user, "inputs[0].user") != user:
        raise Unprocessable(
            "inputs[0].user must be the user (refunds go to who provides the input)",
            error_code="INVALID_USER",
        )
    return SwapTerms(
        user=user,
        input_asset=_interop(given.asset, "inputs[0].asset"),
        input_amount=_amount(given.amount, "inputs[0].amount"),
        output_asset=_interop(wanted.asset, "outputs[0].asset"),
        receiver=_interop(wanted.receiver, "outputs[0].receiver"),
        min_output=None if wanted.amount is None else int(wanted.amount),
        min_valid_until=intent.minValidUntil,
    )


def _typed_order(order: GaslessOrder) -> dict[str, Any]:
    return {
        "type": ESCROW_ORDER,
        "payload": {
            "signatureType": "eip712",
            "domain": order.domain(),
            "primaryType": PRIMARY_TYPE,
            "message": order.message(),
            "types": order.types(),
        },
    }


def quote_answer(terms: SwapTerms, offer: OrderOffer) -> dict[str, Any]:
    """The OIF quote of `offer`: the order to sign; the preview's output what it is expected
    to deliver; its input approved to the origin settler (metadata's `allowances`)."""
    order, data = offer.order, offer.data
    origin, destination = order.origin_chain_id, data.destination_chain_id
    order_id = order.order_id()
    settler = erc7930.InteropAddress.of(origin, order.origin_settler).encode()
    return {
        "quotes": [
            {
                "order": _typed_order(order),
                "validUntil": offer.valid_until,
                "eta": offer.eta_seconds,
                "quoteId": order_id,
                "provider": PROVIDER,
                "preview": {
                    "inputs": [
                        {
                            "user": terms.user.encode(),
                            "asset": terms.input_asset.encode(),
                            "amount": str(data.input_amount),
                        }
                    ],
                    "outputs": [
                        {
                            "receiver": terms.receiver.encode(),
                            "asset": terms.output_asset.encode(),
                            "amount": str(offer.expected_output),
                        }
                    ],
                },
                "failureHandling": REFUND_AUTOMATIC,
                "partialFill": False,
                "metadata": {
                    "orderId": order_id,
                    "minOutputAmount": str(data.output_amount),
                    "allowances": [
                        {
                            "token": terms.input_asset.encode(),
                            "user": terms.user.encode(),
                            "spender": settler,
                            "required": str(data.input_amount),
                        }
                    ],
                    "destinationChainId": destination,
                },
            }
        ]
    }


def _signature(value: str | list[int]) -> bytes:
    if isinstance(value, str):
        digits = value[2:] if value.startswith("0x") else None
        if (
            digits is None
            or len(digits) % 2
            or not all(c in "0123456789abcdefABCDEF" for c in digits)
        ):
            raise BadRequest("signature: not 0x-prefixed hex bytes", error_code="INVALID_SIGNATURE")
        return bytes.fromhex(digits)
    if not all(0 <= byte <= 255 for byte in value):
        raise BadRequest("signature: bytes are 0..255", error_code="INVALID_SIGNATURE")
    return bytes(value)


def submitted_order(body: OifPostOrderRequest) -> tuple[GaslessOrder, CrossfillOrderData, bytes]:
    """The gasless order `body` submits, its order data, and the user's signature."""
    if body.order.type != ESCROW_ORDER:
        raise Unprocessable(
            f"{body.order.type} orders are not taken; Crossfill's are {ESCROW_ORDER}",
            error_code="UNSUPPORTED_ORDER_TYPE",
        )
    payload = body.order.payload
    if payload is None:
        raise BadRequest("order.payload is required")
    signature = _signature(body.signature)
    try:
        order, data = escrow_order(payload.domain, payload.primaryType, payload.message)
    except OrderRefused as exc:
        raise Unprocessable(str(exc), error_code="INVALID_ORDER") from None
    return order, data, signature


def received(order_id: str) -> dict[str, Any]:
    return {
        "orderId": order_id,
        "status": "received",
        "message": "Order accepted; it is opened on chain",
    }


def order_answer(order_id: str, record: OrderRecord) -> dict[str, Any]:
    """OIF's order answer for the request of ERC-7683 order `order_id`."""
    request = record.request
    facts = requests.facts_of(request, record.transactions)
    origin, destination = request.origin_chain_id, request.destination_chain_id
    answer: dict[str, Any] = {
        "id": order_id,
        "status": str(order_status(RequestStatus(request.status))),
        "createdAt": int(request.created_at.timestamp()),
        "updatedAt": int(request.updated_at.timestamp()),
        "quoteId": order_id,
        "inputAmounts": [
            {
                "asset": erc7930.InteropAddress.of(origin, request.origin_currency).encode(),
                "amount": str(request.amount_in),
            }
        ],
        "outputAmounts": [
            {
                "asset": erc7930.InteropAddress.of(
                    destination, request.destination_currency
                ).encode(),
                "amount": str(request.amount_out),
            }
        ],
        "settlement": {
            "type": "escrow",
            "data": {
                "requestId": request.id,
                "openTransactions": list(facts.in_tx_hashes),
                "failReason": request.fail_reason,
            },
        },
    }
    if facts.out_tx_hashes:
        answer["fillTransaction"] = {"hash": facts.out_tx_hashes[-1], "chainId": destination}
    return answer
