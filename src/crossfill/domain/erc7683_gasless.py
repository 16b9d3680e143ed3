"""A gasless ERC-7683 order for Crossfill's origin settler, before it is opened: the standard's
`GaslessCrossChainOrder` as the user signs it (EIP-712 under the settler's domain), its id as
the settler derives it, and the order it opens as (`domain.erc7683.OpenedOrder`). See
docs/erc7683.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from eth_abi.abi import encode
from eth_account.messages import SignableMessage, encode_typed_data
from eth_utils.crypto import keccak

from crossfill.domain.eip712 import EIP712_DOMAIN, eip712_domain, eip712_types
from crossfill.domain.erc7683 import CrossfillOrderData, OpenedOrder, OriginData

SETTLER_NAME: Final = "CrossfillOriginSettler"
SETTLER_VERSION: Final = "1"
PRIMARY_TYPE: Final = "GaslessCrossChainOrder"
GASLESS_ORDER_TYPE: Final = (
    "GaslessCrossChainOrder(address originSettler,address user,uint256 nonce,"
    "uint256 originChainId,uint32 openDeadline,uint32 fillDeadline,bytes32 orderDataType,"
    "bytes orderData)"
)
# Nonces from here up are the settler's own, for orders opened with `open`.
ONCHAIN_NONCES: Final = 2**255
UINT32_MAX: Final = 2**32 - 1


@dataclass(frozen=True)
class GaslessOrder:
    """The signed struct's fields (addresses checksummed)."""

    origin_settler: str
    user: str
    nonce: int
    origin_chain_id: int
    open_deadline: int
    fill_deadline: int
    order_data_type: bytes
    order_data: bytes

    def order_id(self) -> str:
        """The id the settler gives the order when it opens it."""
        encoded = encode(
            ["address", "uint256", "address", "uint256", "uint32", "uint32", "bytes32", "bytes32"],
            [
                self.origin_settler,
                self.origin_chain_id,
                self.user,
                self.nonce,
                self.open_deadline,
                self.fill_deadline,
                self.order_data_type,
                keccak(self.order_data),
            ],
        )
        return "0x" + keccak(encoded).hex()

    def domain(self) -> dict[str, Any]:
        return eip712_domain(
            SETTLER_NAME, SETTLER_VERSION, self.origin_chain_id, self.origin_settler
        )

    def message(self) -> dict[str, Any]:
        """The struct in the JSON form wallets sign: quantities of 256 bits as decimal text (a
        JavaScript number cannot hold them), bytes as 0x-hex."""
        return {
            "originSettler": self.origin_settler,
            "user": self.user,
            "nonce": str(self.nonce),
            "originChainId": str(self.origin_chain_id),
            "openDeadline": self.open_deadline,
            "fillDeadline": self.fill_deadline,
            "orderDataType": "0x" + self.order_data_type.hex(),
            "orderData": "0x" + self.order_data.hex(),
        }

    def types(self) -> dict[str, list[dict[str, str]]]:
        return eip712_types(EIP712_DOMAIN, GASLESS_ORDER_TYPE)

    def signable(self) -> SignableMessage:
        return encode_typed_data(
            full_message={
                "types": self.types(),
                "domain": self.domain(),
                "primaryType": PRIMARY_TYPE,
                "message": self.message(),
            }
        )

    def as_tuple(self) -> tuple[Any, ...]:
        """The struct as `openFor` takes it."""
        return (
            self.origin_settler,
            self.user,
            self.nonce,
            self.origin_chain_id,
            self.open_deadline,
            self.fill_deadline,
            self.order_data_type,
            self.order_data,
        )

    def opened(self, data: CrossfillOrderData) -> OpenedOrder:
        """The order as the settler's `Open` event will carry it, `data` its decoded order
        data (no transaction yet: its hash empty, its block 0)."""
        output = OriginData(
            output_token=data.output_token,
            output_amount=data.output_amount,
            recipient=data.recipient,
            destination_chain_id=data.destination_chain_id,
            fill_deadline=self.fill_deadline,
        )
        return OpenedOrder(
            order_id=self.order_id(),
            user=self.user.lower(),
            origin_chain_id=self.origin_chain_id,
            open_deadline=self.open_deadline,
            fill_deadline=self.fill_deadline,
            input_token=data.input_token,
            input_amount=data.input_amount,
            destination_chain_id=data.destination_chain_id,
            destination_settler=data.destination_settler,
            origin_data=output.encode(),
            output=output,
            tx_hash="",
            block_number=0,
        )
