"""The wire answer of an SVM quote: steps, fees, details and the protocol order."""

from __future__ import annotations

from typing import Any

from crossfill.chains.svm_transactions import instruction_wire
from crossfill.config import ChainConfig
from crossfill.quoting.deposit_steps import amount_wire as _amount
from crossfill.quoting.deposit_steps import details_wire
from crossfill.quoting.deposit_steps import evm_deposit_steps as _evm_steps
from crossfill.quoting.deposit_steps import step as _step
from crossfill.quoting.svm_quote import SvmQuote


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


def _fees(quote: SvmQuote) -> dict[str, Any]:
    fee = _amount(quote, quote.currency_in, quote.service_fee)
    zero = _amount(quote, quote.currency_in, 0)
    return {
        "gas": zero,
        "relayer": fee,
        "relayerGas": zero,
        "relayerService": fee,
        "app": zero,
        "subsidized": zero,
    }


def _details(quote: SvmQuote, evm: ChainConfig) -> dict[str, Any]:
    return details_wire(
        quote, operation="bridge", time_estimate_seconds=evm.fees.fill_time_estimate_seconds
    )


def svm_quote_wire(quote: SvmQuote, evm: ChainConfig) -> dict[str, Any]:
    steps = _evm_steps(quote, evm) if quote.direction == "to_svm" else _svm_steps(quote)
    depository = evm.contracts.depository if quote.direction == "to_svm" else quote.vault
    return {
        "steps": steps,
        "fees": _fees(quote),
        "details": _details(quote, evm),
        "protocol": {
            "v2": {
                "orderId": quote.order_id,
                "hubType": "onchain",
                "paymentDetails": {
                    "chainId": str(quote.currency_in.chain_id),
                    "depository": depository,
                    "currency": quote.currency_in.address,
                    "amount": str(quote.amount_in),
                },
            }
        },
    }


def svm_price_wire(quote: SvmQuote, evm: ChainConfig) -> dict[str, Any]:
    """POST /price for an SVM route: the quote's fees and details, no steps, no order."""
    return {"fees": _fees(quote), "details": _details(quote, evm)}
