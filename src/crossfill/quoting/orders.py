"""The protocol order of a quote: one input on the origin, one payment on the destination
(and a second, of the destination's gas currency, when the quote tops up the recipient's gas).

`order_of` takes the order's terms in the protocol's own form (chain names, VM address
bytes), so routes over any VM state their order the same way; `build_order` is an EVM
route's."""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.domain.order import InputRefund, Order, OrderInput, OrderOutput, OutputPayment
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig


@dataclass(frozen=True)
class OrderSide:
    """One chain of the order: its protocol name, and the currency and account there, as bytes
    of its VM (an EVM address's 20, an SVM address's 32)."""

    chain: str
    currency: bytes
    account: bytes


def order_of(
    *,
    origin: OrderSide,
    destination: OrderSide,
    solver: str,
    salt: int,
    amount_in: int,
    amount_out: int,
    minimum_out: int,
    deadline: int,
    extra_payments: tuple[OutputPayment, ...] = (),
) -> Order:
    """`origin.account` is the refund recipient, `destination.account` the recipient."""
    refund = InputRefund(
        chain_id=origin.chain,
        recipient=origin.account,
        currency=origin.currency,
        minimum_amount=0,
        deadline=deadline,
    )
    payment = OutputPayment(
        recipient=destination.account,
        currency=destination.currency,
        minimum_amount=minimum_out,
        expected_amount=amount_out,
    )
    return Order(
        solver_chain_id=destination.chain,
        solver=solver,
        salt=salt,
        inputs=(
            OrderInput(
                chain_id=origin.chain,
                currency=origin.currency,
                amount=amount_in,
                refunds=(refund,),
            ),
        ),
        output=OrderOutput(
            chain_id=destination.chain, payments=(payment, *extra_payments), deadline=deadline
        ),
    )


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

    extra: tuple[OutputPayment, ...] = ()
    if gas_topup:
        native = raw(destination.native_currency.address)
        extra = (OutputPayment(raw(recipient), native, gas_topup, gas_topup),)
    return order_of(
        origin=OrderSide(origin.protocol_name, raw(currency_in.address), raw(refund_to)),
        destination=OrderSide(destination.protocol_name, raw(currency_out.address), raw(recipient)),
        solver=solver,
        salt=salt,
        amount_in=amount_in,
        amount_out=amount_out,
        minimum_out=minimum_out,
        deadline=deadline,
        extra_payments=extra,
    )
