"""The protocol order and its id: the EIP-712 hashStruct (no domain) of the Order type.

Chain ids are protocol chain-name strings and addresses are VM bytes, as the protocol defines;
the orderId is what the user passes to the Depository as `bytes32 id`. The order's `solver`
commits to it with `orderSignature`: an EIP-191 personal signature of the 32 orderId bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eth_account import Account
from eth_account.messages import encode_defunct, encode_typed_data
from eth_account.signers.local import LocalAccount

ORDER_VERSION = "v1"

ORDER_TYPES: dict[str, list[dict[str, str]]] = {
    "EIP712Domain": [],
    "Order": [
        {"name": "version", "type": "string"},
        {"name": "solverChainId", "type": "string"},
        {"name": "solver", "type": "address"},
        {"name": "salt", "type": "uint256"},
        {"name": "inputs", "type": "Input[]"},
        {"name": "output", "type": "Output"},
        {"name": "fees", "type": "Fee[]"},
    ],
    "Input": [
        {"name": "payment", "type": "InputPayment"},
        {"name": "refunds", "type": "InputRefund[]"},
    ],
    "InputPayment": [
        {"name": "chainId", "type": "string"},
        {"name": "currency", "type": "bytes"},
        {"name": "amount", "type": "uint256"},
        {"name": "weight", "type": "uint256"},
    ],
    "InputRefund": [
        {"name": "chainId", "type": "string"},
        {"name": "recipient", "type": "bytes"},
        {"name": "currency", "type": "bytes"},
        {"name": "minimumAmount", "type": "uint256"},
        {"name": "deadline", "type": "uint32"},
        {"name": "extraData", "type": "bytes"},
    ],
    "Output": [
        {"name": "chainId", "type": "string"},
        {"name": "payments", "type": "OutputPayment[]"},
        {"name": "deadline", "type": "uint32"},
        {"name": "calls", "type": "bytes[]"},
        {"name": "extraData", "type": "bytes"},
    ],
    "OutputPayment": [
        {"name": "recipient", "type": "bytes"},
        {"name": "currency", "type": "bytes"},
        {"name": "minimumAmount", "type": "uint256"},
        {"name": "expectedAmount", "type": "uint256"},
    ],
    "Fee": [
        {"name": "recipientChainId", "type": "string"},
        {"name": "recipient", "type": "bytes"},
        {"name": "currencyChainId", "type": "string"},
        {"name": "currency", "type": "bytes"},
        {"name": "amount", "type": "uint256"},
    ],
}


def _hex(raw: bytes) -> str:
    return "0x" + raw.hex()


@dataclass(frozen=True)
class InputRefund:
    chain_id: str
    recipient: bytes
    currency: bytes
    minimum_amount: int
    deadline: int
    extra_data: bytes = b""


@dataclass(frozen=True)
class OrderInput:
    chain_id: str
    currency: bytes
    amount: int
    refunds: tuple[InputRefund, ...]
    weight: int = 1


@dataclass(frozen=True)
class OutputPayment:
    recipient: bytes
    currency: bytes
    minimum_amount: int
    expected_amount: int


@dataclass(frozen=True)
class OrderOutput:
    chain_id: str
    payments: tuple[OutputPayment, ...]
    deadline: int
    calls: tuple[bytes, ...] = ()
    extra_data: bytes = b""


@dataclass(frozen=True)
class OrderFee:
    recipient_chain_id: str
    recipient: bytes
    currency_chain_id: str
    currency: bytes
    amount: int


@dataclass(frozen=True)
class Order:
    solver_chain_id: str
    solver: str
    salt: int
    inputs: tuple[OrderInput, ...]
    output: OrderOutput
    fees: tuple[OrderFee, ...] = field(default=())
    version: str = ORDER_VERSION

    def typed_message(self) -> dict[str, Any]:
        """The message in EIP-712 form (bytes as bytes, for hashing)."""
        return {
            "version": self.version,
            "solverChainId": self.solver_chain_id,
            "solver": self.solver,
            "salt": self.salt,
            "inputs": [
                {
                    "payment": {
                        "chainId": i.chain_id,
                        "currency": i.currency,
                        "amount": i.amount,
                        "weight": i.weight,
                    },
                    "refunds": [
                        {
                            "chainId": r.chain_id,
                            "recipient": r.recipient,
                            "currency": r.currency,
                            "minimumAmount": r.minimum_amount,
                            "deadline": r.deadline,
                            "extraData": r.extra_data,
                        }
                        for r in i.refunds
                    ],
                }
                for i in self.inputs
            ],
            "output": {
                "chainId": self.output.chain_id,
                "payments": [
                    {
                        "recipient": p.recipient,
                        "currency": p.currency,
                        "minimumAmount": p.minimum_amount,
                        "expectedAmount": p.expected_amount,
                    }
                    for p in self.output.payments
                ],
                "deadline": self.output.deadline,
                "calls": list(self.output.calls),
                "extraData": self.output.extra_data,
            },
            "fees": [
                {
                    "recipientChainId": f.recipient_chain_id,
                    "recipient": f.recipient,
                    "currencyChainId": f.currency_chain_id,
                    "currency": f.currency,
                    "amount": f.amount,
                }
                for f in self.fees
            ],
        }

    def order_id(self) -> bytes:
        """hashStruct(Order): EIP-712 structured hashing without a domain."""
        signable = encode_typed_data(
            full_message={
                "types": ORDER_TYPES,
                "primaryType": "Order",
                "domain": {},
                "message": self.typed_message(),
            }
        )
        return bytes(signable.body)

    def wire(self) -> dict[str, Any]:
        """`protocol.v2.orderData`: the same fields, amounts as strings, bytes as 0x-hex."""
        wire: dict[str, Any] = _stringify(self.typed_message())
        return wire


def _stringify(value: Any) -> Any:
    if isinstance(value, bytes):
        return _hex(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return [_stringify(item) for item in value]
    if isinstance(value, dict):
        return {key: _stringify(item) for key, item in value.items()}
    return value


def sign_order_id(solver: LocalAccount, order_id: bytes) -> str:
    """`protocol.v2.orderSignature`: the solver's EIP-191 signature of the raw orderId bytes."""
    signed = solver.sign_message(encode_defunct(primitive=order_id))
    return "0x" + bytes(signed.signature).hex()


def order_signer(order_id: bytes, signature: str) -> str:
    """The address that produced an `orderSignature` (checksummed)."""
    signer: str = Account.recover_message(encode_defunct(primitive=order_id), signature=signature)
    return signer
