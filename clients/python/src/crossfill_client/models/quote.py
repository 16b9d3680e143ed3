"""The quote answer (`POST /quote/v2`): ordered steps of transaction and signature items, fees,
details and the protocol order.

An item's `data` is one of four shapes, told apart by what it carries: an EVM transaction
(`to`, `data`, `value`, `chainId`), an SVM transaction (`instructions`), a perps-exchange
action (`action`, `eip712Types`), or a message to sign and post (`sign`, `post`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Field, JsonValue, Tag

from crossfill_client.models._base import WireModel
from crossfill_client.models.common import Amount, UsdValue


class EvmTransactionData(WireModel):
    """A transaction to send on an EVM chain. Approval items on some routes carry only
    `from`, `to` and `chainId`."""

    from_: str | None = Field(default=None, alias="from")
    to: str
    data: str = "0x"
    value: int = 0
    chain_id: int
    gas: int | None = None
    max_fee_per_gas: int | None = None
    max_priority_fee_per_gas: int | None = None


class SvmAccountMeta(WireModel):
    pubkey: str
    is_signer: bool
    is_writable: bool


class SvmInstruction(WireModel):
    """One instruction: its program, accounts and data (hex)."""

    program_id: str
    keys: tuple[SvmAccountMeta, ...]
    data: str


class SvmTransactionData(WireModel):
    """Instructions to compile into one SVM transaction, paid by `fee_payer` (the user's own
    account unless the quote named another)."""

    instructions: tuple[SvmInstruction, ...]
    address_lookup_table_addresses: tuple[str, ...] = ()
    chain_id: int
    from_: str | None = Field(default=None, alias="from")
    fee_payer: str | None = None


class TypedField(WireModel):
    name: str
    type: str


class ExchangeAction(WireModel):
    type: str
    parameters: dict[str, JsonValue]


class ExchangeActionData(WireModel):
    """A perps-exchange action to sign (EIP-712, the exchange's domain) and post to the
    exchange itself."""

    action: ExchangeAction
    nonce: int
    eip712_types: dict[str, tuple[TypedField, ...]]
    eip712_primary_type: str


class SignRequest(WireModel):
    """What to sign: `eip712` typed data (domain, types, primary type, value) or an `eip191`
    message."""

    signature_kind: str
    domain: dict[str, JsonValue] = Field(default_factory=dict)
    types: dict[str, tuple[TypedField, ...]] = Field(default_factory=dict)
    primary_type: str | None = None
    value: dict[str, JsonValue] = Field(default_factory=dict)
    message: str | None = None


class PostRequest(WireModel):
    """Where the signature goes: `endpoint` (a path on the service), with `body`, the
    signature in the query parameter `signature`."""

    endpoint: str
    method: str = "POST"
    body: dict[str, JsonValue] = Field(default_factory=dict)


class SignatureData(WireModel):
    sign: SignRequest
    post: PostRequest


def _item_shape(data: object) -> str:
    fields = data if isinstance(data, dict) else vars(data)
    for marker, shape in (("instructions", "svm"), ("action", "exchange"), ("sign", "signature")):
        if marker in fields:
            return shape
    return "evm"


ItemData = Annotated[
    Annotated[EvmTransactionData, Tag("evm")]
    | Annotated[SvmTransactionData, Tag("svm")]
    | Annotated[ExchangeActionData, Tag("exchange")]
    | Annotated[SignatureData, Tag("signature")],
    Discriminator(_item_shape),
]


class Check(WireModel):
    """Where to follow the request after the item: a status path with its `requestId`."""

    endpoint: str
    method: str = "GET"


class StepItem(WireModel):
    status: str
    data: ItemData
    check: Check | None = None


class Step(WireModel):
    id: str
    action: str
    description: str
    kind: Literal["transaction", "signature"]
    request_id: str
    items: tuple[StepItem, ...]
    deposit_address: str = ""


class Fees(WireModel):
    gas: Amount | None = None
    relayer: Amount | None = None
    relayer_gas: Amount | None = None
    relayer_service: Amount | None = None
    app: Amount | None = None
    subsidized: Amount | None = None


class Impact(WireModel):
    usd: str
    percent: str


class RouteSide(WireModel):
    """One chain's leg of a route: what goes in and out there, and who routes it."""

    input_currency: Amount
    output_currency: Amount
    router: str | None = None
    included_swap_sources: tuple[str, ...] = ()


class Route(WireModel):
    origin: RouteSide
    destination: RouteSide


class Details(WireModel):
    operation: str
    sender: str
    recipient: str
    currency_in: Amount
    currency_out: Amount
    refund_currency: Amount | None = None
    currency_gas_topup: Amount | None = None
    total_impact: Impact | None = None
    swap_impact: Impact | None = None
    rate: str | None = None
    time_estimate: float | None = None
    user_balance: str | None = None
    fallback_type: str | None = None
    is_fixed_rate: bool | None = None
    fixed_rate_fee: UsdValue | None = None
    slippage_tolerance: dict[str, JsonValue] | None = None
    expanded_price_impact: dict[str, JsonValue] | None = None
    route: Route | None = None


class PaymentDetails(WireModel):
    chain_id: str
    depository: str
    currency: str
    amount: int


class ProtocolOrder(WireModel):
    order_id: str
    hub_type: str | None = None
    order_data: dict[str, JsonValue] | None = None
    order_signature: str | None = None
    payment_details: PaymentDetails | None = None


class QuoteSolver(WireModel):
    """The external solver whose bid won the quote: it alone may fill the order until
    `exclusivity_deadline` (Unix seconds)."""

    address: str
    name: str
    exclusive: bool
    exclusivity_deadline: int


class Protocol(WireModel):
    v2: ProtocolOrder
    # None: the operator's own solver fills.
    solver: QuoteSolver | None = None


class FailedCallData(WireModel):
    """The call a quote's simulation refused (the Detailed error shape)."""

    from_: str = Field(alias="from")
    to: str
    data: str
    value: int


class Quote(WireModel):
    """An executable quote. `execute` runs its `steps` in order."""

    steps: tuple[Step, ...]
    fees: Fees
    fee_sponsorship: dict[str, JsonValue] | None = None
    details: Details
    protocol: Protocol | None = None

    @property
    def request_ids(self) -> tuple[str, ...]:
        """Every request id the steps carry, in order, once each."""
        return tuple(dict.fromkeys(step.request_id for step in self.steps))

    @property
    def request_id(self) -> str:
        """The request the quote opens (its first step's)."""
        return self.steps[0].request_id

    @property
    def deposit_address(self) -> str | None:
        """The request's own deposit address, when the quote asked for one."""
        return next((step.deposit_address for step in self.steps if step.deposit_address), None)
