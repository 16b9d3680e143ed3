"""The protocol order of a quote: one input on the origin, one payment on the destination
(and a second, of the destination's gas currency, when the quote tops up the recipient's gas)."""

from __future__ import annotations

from crossfill.config import ChainConfig, CurrencyConfig
from crossfill.domain.order import InputRefund, Order, OrderInput, OrderOutput, OutputPayment


def build_order(
    *,
    origin: ChainConfig,
    destination: ChainConfig,
    solver: str,
    salt: int,
    currency_in: CurrencyConfig,
    currency_out: CurrencyConfig,
    amount_in: int,
    amount_out: int,
    minimum_out: int,
    recipient: str,
    refund_to: str,
    deadline: int,
    gas_topup: int = 0,
) -> Order:
    def raw(address: str) -> bytes:
        return bytes.fromhex(address[2:])

    refund = InputRefund(
        chain_id=origin.protocol_name,
        recipient=raw(refund_to),
        currency=raw(currency_in.address),
        minimum_amount=0,
        deadline=deadline,
    )
    payment = OutputPayment(
        recipient=raw(recipient),
        currency=raw(currency_out.address),
        minimum_amount=minimum_out,
        expected_amount=amount_out,
    )
    payments: tuple[OutputPayment, ...] = (payment,)
    if gas_topup:
        native = raw(destination.native_currency.address)
        payments += (OutputPayment(raw(recipient), native, gas_topup, gas_topup),)
    return Order(
        solver_chain_id=destination.protocol_name,
        solver=solver,
        salt=salt,
        inputs=(
            OrderInput(
                chain_id=origin.protocol_name,
                currency=raw(currency_in.address),
                amount=amount_in,
                refunds=(refund,),
            ),
        ),
        output=OrderOutput(
            chain_id=destination.protocol_name, payments=payments, deadline=deadline
        ),
    )
