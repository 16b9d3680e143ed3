"""The wire answer of a quote depositing to the perps exchange: the EVM deposit steps, fees,
details and the protocol order (with `orderData`)."""

from __future__ import annotations

from typing import Any

from crossfill.kinds.perps.quote import PerpsDepositQuote
from crossfill.quoting.cross_vm import EvmSide
from crossfill.quoting.deposit_steps import details_wire, evm_deposit_steps, transfer_answer


def perps_deposit_wire(
    quote: PerpsDepositQuote, evm: EvmSide, *, user_balance: int | None = None
) -> dict[str, Any]:
    """The answer; `user_balance` is the user's balance of the input on the EVM origin."""
    details = details_wire(
        quote,
        operation="bridge" if quote.request_type == "Bridge" else "swap",
        time_estimate_seconds=evm.fees.fill_time_estimate_seconds,
        user_balance=user_balance,
    )
    # Paid into the EVM origin's Depository.
    payment = (str(quote.terms.currency_in.chain_id), evm.contracts.depository)
    return transfer_answer(
        quote, steps=evm_deposit_steps(quote, evm), details=details, payment=payment
    )
