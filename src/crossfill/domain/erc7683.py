"""ERC-7683 orders as Crossfill takes them: its order data (`orderDataType`), an order opened
on its origin settler (the `Open` event's resolved order), and the fill its destination
settler is given (`originData`). See docs/erc7683.md."""

from __future__ import annotations

from dataclasses import dataclass

from eth_abi.abi import decode, encode
from eth_utils.crypto import keccak

ORDER_DATA_TYPE_STRING = (
    "CrossfillOrderData(address inputToken,uint256 inputAmount,uint256 destinationChainId,"
    "address destinationSettler,address outputToken,uint256 outputAmount,address recipient)"
)
ORDER_DATA_TYPE = keccak(text=ORDER_DATA_TYPE_STRING)
_ORDER_DATA_ABI = ["(address,uint256,uint256,address,address,uint256,address)"]
_ORIGIN_DATA_ABI = ["address", "uint256", "address", "uint256", "uint32"]


@dataclass(frozen=True)
class CrossfillOrderData:
    """The `orderData` of a Crossfill order: an ERC-20 input on the origin chain for an output
    (ERC-20, or native as the zero address) paid to `recipient` on `destination_chain_id`
    through `destination_settler`."""

    input_token: str
    input_amount: int
    destination_chain_id: int
    destination_settler: str
    output_token: str
    output_amount: int
    recipient: str

    def encode(self) -> bytes:
        return encode(
            _ORDER_DATA_ABI,
            [
                (
                    self.input_token,
                    self.input_amount,
                    self.destination_chain_id,
                    self.destination_settler,
                    self.output_token,
                    self.output_amount,
                    self.recipient,
                )
            ],
        )

    @classmethod
    def decode(cls, data: bytes) -> CrossfillOrderData:
        """The order data `data` encodes (eth_abi's DecodingError when it encodes none)."""
        ((input_token, input_amount, chain_id, settler, output_token, amount, recipient),) = decode(
            _ORDER_DATA_ABI, data, strict=True
        )
        return cls(
            str(input_token).lower(),
            int(input_amount),
            int(chain_id),
            str(settler).lower(),
            str(output_token).lower(),
            int(amount),
            str(recipient).lower(),
        )


@dataclass(frozen=True)
class OriginData:
    """A fill instruction's `originData`: what the destination settler pays, where and until
    when."""

    output_token: str
    output_amount: int
    recipient: str
    destination_chain_id: int
    fill_deadline: int

    def encode(self) -> bytes:
        return encode(
            _ORIGIN_DATA_ABI,
            [
                self.output_token,
                self.output_amount,
                self.recipient,
                self.destination_chain_id,
                self.fill_deadline,
            ],
        )

    @classmethod
    def decode(cls, data: bytes) -> OriginData:
        token, amount, recipient, chain_id, deadline = decode(_ORIGIN_DATA_ABI, data)
        return cls(
            str(token).lower(), int(amount), str(recipient).lower(), int(chain_id), int(deadline)
        )


@dataclass(frozen=True)
class OpenedOrder:
    """An order the origin settler opened (its `Open` event), in Crossfill's terms: the input
    the settler deposited into the Depository under `order_id`, and the one output to pay."""

    order_id: str
    user: str
    origin_chain_id: int
    open_deadline: int
    fill_deadline: int
    input_token: str
    input_amount: int
    destination_chain_id: int
    destination_settler: str
    origin_data: bytes
    output: OriginData
    tx_hash: str
    block_number: int


def word_address(word: bytes) -> str:
    """The address in a bytes32 (ERC-7683's addresses), lower-case."""
    return "0x" + bytes(word)[-20:].hex()


# A fill deadline closer than this when the order is taken: refused (refunded) at once.
LEAST_FILL_SECONDS = 60
# Why an order is refused, as a request's failReason (the codes other requests use).
UNSERVED = "NO_QUOTES"
TOO_LATE = "ORDER_EXPIRED"
OUTPUT_NOT_COVERED = "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"


def refusal(
    order: OpenedOrder, *, settler: str | None, quoted_output: int, now_seconds: int
) -> str | None:
    """Why Crossfill will not fill `order`, or None: the destination's settler is not ours
    (`settler`: the destination chain's, None where it has none), its fill deadline leaves
    less than `LEAST_FILL_SECONDS`, or its input, priced as a quote of it is (`quoted_output`,
    fees taken), does not cover its output."""
    if settler is None or settler.lower() != order.destination_settler.lower():
        return UNSERVED
    if order.output.destination_chain_id != order.destination_chain_id:
        return UNSERVED
    if order.fill_deadline - now_seconds < LEAST_FILL_SECONDS:
        return TOO_LATE
    if quoted_output < order.output.output_amount:
        return OUTPUT_NOT_COVERED
    return None
