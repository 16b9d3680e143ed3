"""The wire answer of an SVM quote: steps, fees, fee sponsorship, details and the protocol
order, in the shape and with the meaning of an EVM bridge's (`quoting.response` and
`quoting.deposit_steps` build the parts they share)."""

from __future__ import annotations

from typing import Any

from crossfill.kinds.svm.quote import SvmQuote
from crossfill.kinds.svm.transactions import instruction_wire
from crossfill.quoting.cross_vm import EvmSide
from crossfill.quoting.deposit_steps import amount_wire as _amount
from crossfill.quoting.deposit_steps import details_wire, service_fee_wire, transfer_answer
from crossfill.quoting.deposit_steps import evm_deposit_steps as _evm_steps
from crossfill.quoting.deposit_steps import step as _step

# The SVM payer's usual time from a confirmed EVM deposit to the landed payment, in seconds.
SVM_FILL_SECONDS = 10


def _svm_steps(quote: SvmQuote) -> list[dict[str, Any]]:
    assert quote.deposit_instructions is not None
    data = {
        "instructions": [instruction_wire(ix) for ix in quote.deposit_instructions],
        "addressLookupTableAddresses": [],
        "chainId": quote.terms.currency_in.chain_id,
        "from": quote.terms.user,
        # The transaction's fee payer (`depositFeePayer`, else the user): it signs as well.
        "feePayer": quote.fee_payer,
    }
    return [_step(quote, "deposit", "Depositing funds", data)]


def _gas(quote: SvmQuote) -> dict[str, Any]:
    """`fees.gas`: the user's own fee for the deposit, in the origin's gas currency."""
    return _amount(quote.gas_currency, quote.deposit_gas)


def _details(quote: SvmQuote, evm: EvmSide) -> dict[str, Any]:
    seconds = (
        evm.fees.fill_time_estimate_seconds if quote.direction == "from_svm" else SVM_FILL_SECONDS
    )
    return details_wire(
        quote,
        operation="bridge",
        time_estimate_seconds=seconds,
        fixed=quote.fixed_rate_bps is not None,
    )


def svm_quote_wire(
    quote: SvmQuote, evm: EvmSide, *, order_signature: str | None = None
) -> dict[str, Any]:
    to_svm = quote.direction == "to_svm"
    steps = _evm_steps(quote, evm) if to_svm else _svm_steps(quote)
    depository = evm.contracts.depository if to_svm else quote.vault
    return transfer_answer(
        quote,
        steps=steps,
        details=_details(quote, evm),
        payment=(quote.terms.currency_in.chain_name, depository),
        gas=_gas(quote),
        order_signature=order_signature,
    )


def svm_price_wire(quote: SvmQuote, evm: EvmSide) -> dict[str, Any]:
    """POST /price for an SVM route: the quote's fees and details, no steps, no order."""
    return {"fees": service_fee_wire(quote.terms, gas=_gas(quote)), "details": _details(quote, evm)}
