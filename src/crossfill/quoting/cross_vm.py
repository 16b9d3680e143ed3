"""What quotes with a side off the EVM chains share, whichever kind that side is: a currency
at its quoted USD price, an EVM chain's side of such a route, the transfer quoted, priced in
USD (`TransferTerms`), what makes each quote its own (`QuoteStamp`), and its protocol order
(`transfer_order`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Protocol, TypeAlias, TypeVar

from crossfill.config import Deployment
from crossfill.domain.order import Order
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig, evm_chain
from crossfill.quoting import inputs
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.orders import OrderSide, order_of

BPS = 10_000

# A cross-VM route's EVM side: an EVM chain of the deployment file. The other kinds read it
# here, in the shared quoting layer, never from the EVM kind itself (kinds import no other kind).
EvmSide: TypeAlias = ChainConfig


def evm_side(deployment: Deployment, chain_id: int) -> EvmSide | None:
    """The EVM chain `chain_id` as a cross-VM route's side; None: the file has no such chain."""
    return evm_chain(deployment, chain_id)


@dataclass(frozen=True)
class QuotedCurrency:
    chain_id: int
    # The chain's protocol name (the order's chain id).
    chain_name: str
    address: str
    symbol: str
    name: str
    decimals: int
    is_native: bool
    logo_uri: str
    usd_price: Decimal

    def usd_micros(self, amount: int) -> int:
        """What `amount` smallest units are worth at this price, in micro-USD (rounded down)."""
        return int(Fraction(amount, 10**self.decimals) * Fraction(self.usd_price) * 10**6)


class Bridgeable(Protocol):
    """A configured currency of any kind of chain, as a quote reads it."""

    @property
    def supports_bridging(self) -> bool: ...

    @property
    def usd_price(self) -> Decimal | None: ...


Found = TypeVar("Found", bound=Bridgeable)


def bridged(
    found: Found | None,
    named: tuple[str, str],
    chain_id: int,
    live_price: Decimal | None = None,
) -> tuple[Found, Decimal]:
    """The currency a request's (field, address) `named` found on `chain_id`, and its USD price
    (`live_price`, else the configured one); refused unless the chain bridges it and it has a
    price."""
    field, address = named
    if found is None or not found.supports_bridging:
        raise QuoteError(
            "UNSUPPORTED_CURRENCY", f"{field} {address} is not supported on chain {chain_id}"
        )
    usd = live_price if live_price is not None else found.usd_price
    if usd is None:
        raise QuoteError("UNSUPPORTED_CURRENCY", f"{field} {address} has no price")
    return found, usd


def quoted_evm_currency(
    chain: ChainConfig, address: str, field: str, price: Decimal | None
) -> QuotedCurrency:
    """A bridgeable currency of an EVM chain at its live USD price, or its configured one."""
    inputs.address(address, "UNSUPPORTED_CURRENCY", field)
    found, usd = bridged(chain.currency(address), (field, address), chain.id, price)
    return evm_currency(chain, found, usd)


def evm_currency(chain: ChainConfig, found: CurrencyConfig, usd: Decimal) -> QuotedCurrency:
    return QuotedCurrency(
        chain.id, chain.protocol_name, found.address.lower(), found.symbol, found.name,
        found.decimals, found.is_native, found.logo_uri, usd,
    )  # fmt: skip


@dataclass(frozen=True)
class TransferTerms:
    """What a quote crossing to another kind of chain transfers: `amount_in` of `currency_in`
    from `user` for `amount_out` of `currency_out` to `recipient`, the input's USD value at the
    quoted prices less the service fee (`service_fee`, in input units); a refund goes to
    `refund_to`."""

    user: str
    recipient: str
    refund_to: str
    currency_in: QuotedCurrency
    currency_out: QuotedCurrency
    amount_in: int
    amount_out: int
    service_fee: int

    @property
    def is_bridge(self) -> bool:
        """The same asset on both sides: a bridge, else a cross-chain swap."""
        return self.currency_in.symbol == self.currency_out.symbol


def priced_transfer(
    accounts: tuple[str, str, str],
    currencies: tuple[QuotedCurrency, QuotedCurrency],
    amount_in: int,
    fee_bps: int,
) -> TransferTerms:
    """The transfer between (user, recipient, refund recipient) `accounts` of (input, output)
    `currencies`, priced in USD: the output is the input's value less `fee_bps` of it, in the
    output currency (rounded down), refused when nothing is left."""
    user, recipient, refund_to = accounts
    into, out = currencies
    fee = amount_in * fee_bps // BPS
    value = Fraction(amount_in - fee, 10**into.decimals) * Fraction(into.usd_price)
    amount_out = int(value / Fraction(out.usd_price) * 10**out.decimals)
    if amount_out <= 0:
        raise QuoteError("AMOUNT_TOO_LOW", "the amount does not cover the fees")
    return TransferTerms(user, recipient, refund_to, into, out, amount_in, amount_out, fee)


@dataclass(frozen=True)
class QuoteStamp:
    """What makes a quote its own: when it is made (`now`), how long it stands (`ttl`), its
    request id and its order's salt (random), and the solver its order names (the solver's EVM
    address, which signs `orderSignature`)."""

    now: datetime
    ttl: timedelta
    request_id: bytes
    salt: int
    solver: str

    @property
    def expires_at(self) -> datetime:
        return self.now + self.ttl

    @property
    def request_id_hex(self) -> str:
        return "0x" + self.request_id.hex()


def hex_bytes(address: str) -> bytes:
    """A 0x-hex address (an EVM address, an exchange currency's id) as its bytes."""
    return bytes.fromhex(address.removeprefix("0x"))


def transfer_order(
    terms: TransferTerms,
    stamp: QuoteStamp,
    *,
    deadline: int,
    raw: Callable[[str], bytes] = hex_bytes,
) -> Order:
    """The protocol order of `terms`: the input on its currency's chain, refunded to
    `refund_to`, for the quoted output (its minimum too) paid to `recipient`; every address
    as bytes of its VM (`raw`)."""
    into, out = terms.currency_in, terms.currency_out
    return order_of(
        origin=OrderSide(into.chain_name, raw(into.address), raw(terms.refund_to)),
        destination=OrderSide(out.chain_name, raw(out.address), raw(terms.recipient)),
        solver=stamp.solver,
        salt=stamp.salt,
        amount_in=terms.amount_in,
        amount_out=terms.amount_out,
        minimum_out=terms.amount_out,
        deadline=deadline,
    )
