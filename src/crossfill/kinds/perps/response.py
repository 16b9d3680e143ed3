"""The wire answer of a quote depositing to the perps exchange: the EVM deposit steps, fees,
details and the protocol order (with `orderData`)."""

from __future__ import annotations

from typing import Any

from crossfill.config import ChainConfig
from crossfill.kinds.perps.quote import PerpsDepositQuote
from crossfill.quoting.deposit_steps import (
    details_wire,
    evm_deposit_steps,
    service_fee_wire,
    unsponsored_wire,
)


def perps_deposit_wire(quote: PerpsDepositQuote, evm: ChainConfig) -> dict[str, Any]:
    return {
        "steps": evm_deposit_steps(quote, evm),
        "fees": service_fee_wire(quote.currency_in, quote.service_fee),
        # Nothing of a deposit to the exchange is sponsored.
        "feeSponsorship": unsponsored_wire(quote.currency_in, quote.service_fee),
        "details": details_wire(
            quote,
            operation="bridge" if quote.request_type == "Bridge" else "swap",
            time_estimate_seconds=evm.fees.fill_time_estimate_seconds,
        ),
        "protocol": {
            "v2": {
                "orderId": quote.order_id,
                "hubType": "onchain",
                "orderData": quote.order.wire(),
                "paymentDetails": {
                    "chainId": str(quote.currency_in.chain_id),
                    "depository": evm.contracts.depository,
                    "currency": quote.currency_in.address,
                    "amount": str(quote.amount_in),
                },
            }
        },
    }
