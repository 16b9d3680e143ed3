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
    }
    return [_step(quote, "deposit", "Depositing funds", data)]


def svm_quote_wire(quote: SvmQuote, evm: ChainConfig) -> dict[str, Any]:
    steps = _evm_steps(quote, evm) if quote.direction == "to_svm" else _svm_steps(quote)
    fee = _amount(quote, quote.currency_in, quote.service_fee)
    zero = _amount(quote, quote.currency_in, 0)
    depository = evm.contracts.depository if quote.direction == "to_svm" else quote.vault
    return {
        "steps": steps,
        "fees": {
            "gas": zero,
            "relayer": fee,
            "relayerGas": zero,
            "relayerService": fee,
            "app": zero,
            "subsidized": zero,
        },
        "details": details_wire(
            quote, operation="bridge", time_estimate_seconds=evm.fees.fill_time_estimate_seconds
        ),
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
