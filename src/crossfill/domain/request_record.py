"""The request records of `GET /requests/v3` and the deprecated `/requests/v2` (pure shaping).

Both come from one `RecordFacts`: the request, its stored quote and its settled transactions.
v3 follows the spec's table (null when absent, never `N/A`); v2 applies the spec's "Differences
v2 to v3" in reverse (`N/A` reasons, wei `fees` + `feesUsd`, `currencyObject`s, `metadata`,
`hash`, `partnerId` at the root, a `relay` fee bucket).
"""

from __future__ import annotations

from typing import Any

from crossfill.domain.money import format_units, format_usd
from crossfill.domain.record_facts import (
    AppFeeFacts,
    RecordFacts,
    TxFacts,
    deposit_address_wire,
)
from crossfill.domain.record_outcome import (
    actual_fees,
    actual_route,
    deposit_tx,
    refund_currency_data,
    settled,
)
from crossfill.domain.status_record import NOT_APPLICABLE

OUT_KINDS = ("fill", "refund")
FEE_COMPONENTS = {  # record component → quote `fees` entry
    "execution": "relayerGas",
    "platform": "relayerService",
    "app": "app",
    "sponsored": "subsidized",
}


def _tx(tx: TxFacts, hash_key: str) -> dict[str, Any]:
    return {
        hash_key: tx.tx_hash,
        "fee": tx.fee or "0",
        "block": tx.block_number,
        "type": "onchain",
        "chainId": tx.chain_id,
        "timestamp": tx.timestamp or 0,
        "status": tx.status,
        "data": None,
        "stateChanges": None,
    }


def _failed(facts: RecordFacts) -> TxFacts | None:
    """The failed fill; else the failed deposit (a gasless call that reverted)."""
    for kind in ("fill", "deposit"):
        failed = next((tx for tx in settled(facts, (kind,)) if tx.status == "failure"), None)
        if failed is not None:
            return failed
    return None


def _failed_call(facts: RecordFacts) -> dict[str, str] | None:
    return facts.gas_sponsor.failed_call() if facts.gas_sponsor is not None else None


def _slippage_bps(facts: RecordFacts) -> str:
    if facts.amount_out == 0:
        return "0"
    return str((facts.amount_out - facts.minimum_amount_out) * 10_000 // facts.amount_out)


def _details(facts: RecordFacts) -> dict[str, Any]:
    details: dict[str, Any] = facts.quote["details"]
    return details


def _currency_in(facts: RecordFacts) -> dict[str, Any]:
    currency: dict[str, Any] = _details(facts)["currencyIn"]["currency"]
    return currency


def _app_fee_entry(fee: AppFeeFacts, amount: int, decimals: int) -> dict[str, Any]:
    return {
        "recipient": fee.recipient,
        "bps": str(fee.bps),
        "amount": str(amount),
        "amountFormatted": format_units(amount, decimals),
    }


def _app_fees(facts: RecordFacts) -> dict[str, list[dict[str, Any]]]:
    """Per recipient: as quoted, and as settled (with USD) once the request is final."""
    decimals = int(_currency_in(facts)["decimals"])
    quoted = [_app_fee_entry(fee, fee.quoted_amount, decimals) for fee in facts.app_fees]
    actual = [
        {
            **_app_fee_entry(fee, fee.actual_amount, decimals),
            "amountUsd": format_usd(fee.amount_usd_micros if fee.actual_amount else 0),
        }
        for fee in facts.app_fees
        if fee.actual_amount is not None
    ]
    return {"quoted": quoted, "actual": actual}


def _platform_named(phase: dict[str, Any]) -> dict[str, Any]:
    """v3 records call the service's component `platform` (quotes say `relay`)."""
    renamed = dict(phase)
    renamed["selectedComponents"] = [
        "platform" if name == "relay" else name for name in phase.get("selectedComponents", [])
    ]
    renamed["components"] = {
        ("platform" if name == "relay" else name): part
        for name, part in phase.get("components", {}).items()
    }
    return renamed


def _v3_sponsorship(facts: RecordFacts, executed: bool) -> dict[str, Any]:
    quoted = (facts.quote.get("feeSponsorship") or {}).get("quoted")
    gas_payment = facts.gas_sponsor.payment() if facts.gas_sponsor else None
    if quoted is None:
        # A gasless execution without quoted sponsorship: only the sponsor's gas to show.
        actual = (
            None if gas_payment is None else {"sponsorPayment": None, "gasPayment": gas_payment}
        )
        return {"quoted": None, "actual": actual}
    payment = (facts.plan or {}).get("sponsorPayment")
    actual = {**_platform_named(quoted), "sponsorPayment": payment} if executed else None
    if actual is not None and gas_payment is not None:
        actual["gasPayment"] = gas_payment
    return {"quoted": _platform_named(quoted), "actual": actual}


def _subsidized(facts: RecordFacts) -> bool:
    """Quoted fee sponsorship, or a gasless execution whose client asked for subsidized fees."""
    gas_subsidized = facts.gas_sponsor is not None and facts.gas_sponsor.subsidized
    return gas_subsidized or _v2_subsidized_fee(facts) is not None


def _fee_components(facts: RecordFacts) -> dict[str, dict[str, str]]:
    fees = facts.quote["fees"]
    zero = {"usd": "0", "amount": "0", "amountFormatted": "0"}
    components = {"swap": zero}
    for name, source in FEE_COMPONENTS.items():
        entry = fees[source]
        components[name] = {
            "usd": entry["amountUsd"],
            "amount": entry["amount"],
            "amountFormatted": entry["amountFormatted"],
        }
    return components


def _route_leg(leg: dict[str, Any]) -> dict[str, Any]:
    return {
        "inputCurrency": leg["inputCurrency"],
        "outputCurrency": leg["outputCurrency"],
        "router": leg["router"],
    }


def _swap_sources(quoted_route: dict[str, Any], side: str) -> list[str]:
    sources: list[str] = quoted_route[side].get("includedSwapSources", [])
    return sources


def _route(facts: RecordFacts) -> dict[str, Any]:
    details = _details(facts)
    quoted_route = details["route"]
    quoted = {side: _route_leg(quoted_route[side]) for side in ("origin", "destination")}
    origin_sources = _swap_sources(quoted_route, "origin")
    destination_sources = _swap_sources(quoted_route, "destination")
    return {
        "includedSwapSources": list(dict.fromkeys(origin_sources + destination_sources)),
        "includedOriginSwapSources": origin_sources,
        "includedDestinationSwapSources": destination_sources,
        "quoted": quoted,
        "actual": actual_route(facts, quoted, details["rate"]),
    }


def _protocol(facts: RecordFacts) -> dict[str, Any] | None:
    """The protocol order; None for a request without one (a standalone gasless call)."""
    if "protocol" not in facts.quote:
        return None
    v2 = facts.quote["protocol"]["v2"]
    payment = v2["paymentDetails"]
    deposit = next(iter(settled(facts, ("deposit",))), None)
    paid = deposit_tx(facts)
    moved = paid.moved if paid is not None else None
    return {
        "orderId": v2["orderId"],
        "hubType": v2["hubType"],
        "isWithdrawable": False,
        "solver": {
            "address": facts.solver.address,
            "protocolChainId": facts.solver.protocol_chain_id,
            "chainId": facts.solver.chain_id,
        },
        "deposit": {
            "origin": {
                "amount": str(moved.amount) if moved else payment["amount"],
                "chainId": _currency_in(facts)["chainId"],
                "currency": moved.currency if moved else payment["currency"],
                "depositor": deposit.sender if deposit and deposit.sender else facts.user,
                "depository": payment["depository"],
                "onchainId": v2["orderId"],
                "transactionId": deposit.tx_hash if deposit else None,
            }
        },
        "settlement": {
            "destination": {
                "fills": [
                    {"chainId": tx.chain_id, "transactionId": tx.tx_hash}
                    for tx in settled(facts, ("fill",))
                ],
                "refunds": [
                    {"chainId": tx.chain_id, "transactionId": tx.tx_hash}
                    for tx in settled(facts, ("refund",))
                ],
            }
        },
    }


def v3_record(facts: RecordFacts) -> dict[str, Any]:
    details = _details(facts)
    failed = _failed(facts)
    quoted_fees = _fee_components(facts)
    executed = facts.status == "success"
    currency = _currency_in(facts)
    data: dict[str, Any] = {
        "slippageTolerance": _slippage_bps(facts),
        "failReason": facts.fail_reason,
        "refundFailReason": facts.refund_fail_reason,
        "failedTxHash": failed.tx_hash if failed else None,
        "failedTxBlockNumber": failed.block_number if failed else None,
        "failedCallData": _failed_call(facts),
        "usesExternalLiquidity": False,
        "timeEstimate": details["timeEstimate"],
        "triggeredByFastFill": True if "fast_fill" in facts.features else None,
        "inTxs": [_tx(tx, "txHash") for tx in settled(facts, ("deposit",))],
        "outTxs": [_tx(tx, "txHash") for tx in settled(facts, OUT_KINDS)],
        "appFees": {**_app_fees(facts), "currency": currency},
        "fees": {
            "quoted": quoted_fees,
            "actual": actual_fees(facts, quoted_fees),
            "currency": currency,
        },
        "feeSponsorship": {**_v3_sponsorship(facts, executed), "currency": currency},
        "route": _route(facts),
        "platformFee": None,
        "quoteOraclePrice": None,
        "refundCurrencyData": refund_currency_data(facts),
        "externalMetadata": {"partnerId": None},
    }
    if facts.referrer is not None:
        data["referrer"] = facts.referrer
    return {
        "id": facts.request_id,
        "status": facts.status,
        "user": facts.user,
        "sender": facts.user,
        "recipient": facts.recipient,
        "refundTo": facts.refund_to,
        "depositAddress": deposit_address_wire(facts.deposit_address, "v3"),
        "requestType": facts.request_type,
        "supersededByRequestId": None,
        "features": list(facts.features),
        "data": data,
        "protocol": _protocol(facts),
        "createdAt": facts.created_at,
        "updatedAt": facts.updated_at,
    }


def _v2_app_fee(fee: AppFeeFacts, amount: int) -> dict[str, Any]:
    usd = format_usd(fee.amount_usd_micros)
    return {
        "recipient": fee.recipient,
        "bps": str(fee.bps),
        "amount": str(amount),
        "amountUsd": usd,
        "amountUsdCurrent": usd,
    }


def _v2_subsidized_fee(facts: RecordFacts) -> dict[str, Any] | None:
    """What the sponsor covered, in the input currency and as the sponsor pays it."""
    payment = (facts.plan or {}).get("sponsorPayment")
    subsidized = facts.quote["fees"]["subsidized"]
    if payment is None or int(subsidized["amount"]) == 0:
        return None
    currency = subsidized["currency"]
    return {
        "origin": {
            "amount": subsidized["amount"],
            "address": currency["address"],
            "chainId": currency["chainId"],
        },
        "sponsor": payment,
        "amountUsd": subsidized["amountUsd"],
        "amountUsdCurrent": subsidized["amountUsd"],
    }


# v2 has no `submitted`: a fill on its way is still `pending` there.
V2_STATUS = {"submitted": "pending"}


def v2_record(facts: RecordFacts, *, include_order_data: bool = False) -> dict[str, Any]:
    details = _details(facts)
    fees = facts.quote["fees"]
    failed = _failed(facts)
    currency = _currency_in(facts)
    impact = details["expandedPriceImpact"]
    sponsorship = facts.quote.get("feeSponsorship") or {}
    protocol = _protocol(facts)
    if include_order_data and protocol is not None:
        protocol["orderData"] = facts.quote["protocol"]["v2"]["orderData"]
    data: dict[str, Any] = {
        "slippageTolerance": _slippage_bps(facts),
        "failReason": facts.fail_reason or NOT_APPLICABLE,
        "refundFailReason": facts.refund_fail_reason or NOT_APPLICABLE,
        "supersededByRequestId": None,
        "failedTxHash": failed.tx_hash if failed else None,
        "failedTxBlockNumber": failed.block_number if failed else None,
        "failedCallData": _failed_call(facts),
        "details": None if facts.fail_details is None else dict(facts.fail_details),
        "subsidizedRequest": _subsidized(facts),
        "price": details["rate"],
        "fees": {
            "gas": fees["relayerGas"]["amount"],
            "fixed": "0",
            "price": fees["relayerService"]["amount"],
            "gateway": "0",
        },
        "feesUsd": {
            "gas": fees["relayerGas"]["amountUsd"],
            "fixed": "0",
            "price": fees["relayerService"]["amountUsd"],
            "gateway": "0",
        },
        "inTxs": [_tx(tx, "hash") for tx in settled(facts, ("deposit",))],
        "outTxs": [_tx(tx, "hash") for tx in settled(facts, OUT_KINDS)],
        "currency": currency["address"],
        "currencyObject": currency,
        "feeCurrency": currency["address"],
        "feeCurrencyObject": currency,
        "appFeeCurrencyObject": currency,
        "refundCurrencyData": refund_currency_data(facts),
        "appFees": [_v2_app_fee(fee, fee.quoted_amount) for fee in facts.app_fees],
        "paidAppFees": [
            _v2_app_fee(fee, fee.actual_amount) for fee in facts.app_fees if fee.actual_amount
        ],
        "subsidizedFee": _v2_subsidized_fee(facts),
        "expandedPriceImpact": {
            "quoted": impact,
            "actual": impact if facts.status == "success" else None,
        },
        "feeSponsorship": {"quoted": sponsorship.get("quoted"), "actual": None},
        "usesExternalLiquidity": False,
        "timeEstimate": details["timeEstimate"],
        "metadata": {
            "sender": facts.user,
            "recipient": facts.recipient,
            "currencyIn": details["currencyIn"],
            "currencyOut": details["currencyOut"],
            "currencyGasTopup": None,
            "rate": details["rate"],
            "route": _route(facts)["quoted"],
        },
    }
    return {
        "id": facts.request_id,
        "status": V2_STATUS.get(facts.status, facts.status),
        "user": facts.user,
        "recipient": facts.recipient,
        "depositAddress": deposit_address_wire(facts.deposit_address, "v2"),
        "partnerId": None,
        "referrer": facts.referrer,
        "data": data,
        "protocol": protocol,
        "createdAt": facts.created_at,
        "updatedAt": facts.updated_at,
    }
