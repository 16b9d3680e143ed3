"""The protocol order and its id: the EIP-712 hashStruct (no domain) of the Order type.

Chain ids are protocol chain-name strings and addresses are VM bytes, as the protocol defines;
the orderId is what the user passes to the Depository as `bytes32 id`. The order's `solver`
commits to it with `orderSignature`: an EIP-191 personal signature of the 32 orderId bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from eth_account import Account
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from eth_hash.auto import keccak
from sha3 import keccak_256

from crossfill.domain.eip712 import eip712_types

ORDER_VERSION = "v1"

ORDER_TYPES = eip712_types(
    "EIP712Domain()",
    "Order(string version,string solverChainId,address solver,uint256 salt,Input[] inputs,"
    "Output output,Fee[] fees)",
    "Input(InputPayment payment,InputRefund[] refunds)",
    "InputPayment(string chainId,bytes currency,uint256 amount,uint256 weight)",
    "InputRefund(string chainId,bytes recipient,bytes currency,uint256 minimumAmount,"
    "uint32 deadline,bytes extraData)",
    "Output(string chainId,OutputPayment[] payments,uint32 deadline,bytes[] calls,bytes extraData)",
    "OutputPayment(bytes recipient,bytes currency,uint256 minimumAmount,uint256 expectedAmount)",
    "Fee(string recipientChainId,bytes recipient,string currencyChainId,bytes currency,"
    "uint256 amount)",
)


FieldEncoder = Callable[[Any], bytes]


class StructHasher:
    """EIP-712 hashStruct for a fixed set of types, with each type's typeHash and field
    encoders worked out once (eth_account's encoder re-derives them on every call, which was
    most of a quote's planning time). Covers the types the Order uses: structs, arrays of
    them, string, bytes, address, uintN."""

    def __init__(self, types: dict[str, list[dict[str, str]]]) -> None:
        self._types = types
        self._type_hashes = {name: keccak(self.type_string(name).encode()) for name in types}
        self._fields: dict[str, list[tuple[str, FieldEncoder]]] = {
            name: [(f["name"], self._encoder(f["type"])) for f in fields]
            for name, fields in types.items()
        }

    def hash_struct(self, primary: str, value: dict[str, Any]) -> bytes:
        encoded = [self._type_hashes[primary]]
        encoded.extend(encode(value[name]) for name, encode in self._fields[primary])
        return keccak(b"".join(encoded))

    def _encoder(self, type_name: str) -> FieldEncoder:
        if type_name.endswith("[]"):
            item = self._encoder(type_name[:-2])
            return lambda values: keccak(b"".join(item(value) for value in values))
        if type_name in self._types:
            return lambda value: self.hash_struct(type_name, value)
        if type_name == "string":
            return lambda value: keccak(value.encode())
        if type_name == "bytes":
            return lambda value: keccak(bytes(value))
        if type_name == "address":
            return lambda value: bytes(12) + bytes.fromhex(value.removeprefix("0x"))
        if type_name.startswith("uint"):
            bits = int(type_name[4:])
            return lambda value: _uint(value, bits)
        raise ValueError(f"unsupported EIP-712 type {type_name}")

    def _dependencies(self, primary: str, found: set[str]) -> set[str]:
        if primary not in found and primary in self._types:
            found.add(primary)
            for f in self._types[primary]:
                self._dependencies(f["type"].removesuffix("[]"), found)
        return found

    def type_string(self, primary: str) -> str:
        """encodeType: the primary type then its dependencies in name order."""
        others = sorted(self._dependencies(primary, set()) - {primary})
        return "".join(
            name + "(" + ",".join(f"{f['type']} {f['name']}" for f in self._types[name]) + ")"
            for name in [primary, *others]
        )


def _uint(value: int, bits: int) -> bytes:
    if not 0 <= value < 1 << bits:
        raise ValueError(f"{value} is not a uint{bits}")
    return value.to_bytes(32, "big")


def _hash(data: bytes) -> bytes:
    """keccak256 by safe-pysha3 itself (the backend `crossfill` sets for eth-hash, whose
    dispatch layers cost as much as the hash on these short inputs; an order takes ~25)."""
    if not data:
        return _EMPTY_HASH
    digest: bytes = keccak_256(data).digest()
    return digest


@lru_cache(maxsize=4096)
def _short_hash(data: bytes) -> bytes:
    return _hash(data)


def _bytes_hash(data: bytes) -> bytes:
    """A bytes field's hash. Most are addresses (currencies, recipients) that come again on
    order after order: up to 32 bytes, kept; longer values (calls) are hashed each time."""
    return _short_hash(data) if len(data) <= 32 else _hash(data)


@lru_cache(maxsize=1024)
def _text_hash(text: str) -> bytes:
    """A string field's hash: the version and chain names, the same few on every order."""
    return _hash(text.encode())


def _uint256(value: int) -> bytes:
    if not 0 <= value < _UINT256_END:
        raise ValueError(f"{value} is not a uint256")
    return value.to_bytes(32, "big")


def _uint32(value: int) -> bytes:
    if not 0 <= value < _UINT32_END:
        raise ValueError(f"{value} is not a uint32")
    return value.to_bytes(32, "big")


ORDER_HASHER = StructHasher({k: v for k, v in ORDER_TYPES.items() if k != "EIP712Domain"})

# The Order's hashStruct written out field by field over the dataclasses below: the same
# encoding as ORDER_HASHER (the unit test compares both with eth_account's), without building
# the typed message's dicts and calling a generic encoder per field, which was most of the
# orderId's cost on every quote. Every field of these types is a string, bytes, an address, a
# uint or an array of structs, so each struct hashes to its typeHash followed by 32-byte words.
_TYPE_HASH = {
    name: keccak(ORDER_HASHER.type_string(name).encode())
    for name in ORDER_TYPES
    if name != "EIP712Domain"
}
_UINT256_END = 1 << 256
_EMPTY_HASH = keccak(b"")
_UINT32_END = 1 << 32


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
        return self._message(_same, _same)

    def _message(self, uint: Callable[[int], Any], raw: Callable[[bytes], Any]) -> dict[str, Any]:
        """The message's fields, its uints through `uint` and its bytes through `raw`."""
        return {
            "version": self.version,
            "solverChainId": self.solver_chain_id,
            "solver": self.solver,
            "salt": uint(self.salt),
            "inputs": [
                {
                    "payment": {
                        "chainId": i.chain_id,
                        "currency": raw(i.currency),
                        "amount": uint(i.amount),
                        "weight": uint(i.weight),
                    },
                    "refunds": [
                        {
                            "chainId": r.chain_id,
                            "recipient": raw(r.recipient),
                            "currency": raw(r.currency),
                            "minimumAmount": uint(r.minimum_amount),
                            "deadline": uint(r.deadline),
                            "extraData": raw(r.extra_data),
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
                        "recipient": raw(p.recipient),
                        "currency": raw(p.currency),
                        "minimumAmount": uint(p.minimum_amount),
                        "expectedAmount": uint(p.expected_amount),
                    }
                    for p in self.output.payments
                ],
                "deadline": uint(self.output.deadline),
                "calls": [raw(call) for call in self.output.calls],
                "extraData": raw(self.output.extra_data),
            },
            "fees": [
                {
                    "recipientChainId": f.recipient_chain_id,
                    "recipient": raw(f.recipient),
                    "currencyChainId": f.currency_chain_id,
                    "currency": raw(f.currency),
                    "amount": uint(f.amount),
                }
                for f in self.fees
            ],
        }

    def order_id(self) -> bytes:
        """hashStruct(Order): EIP-712 structured hashing without a domain."""
        return _hash(
            b"".join(
                (
                    _TYPE_HASH["Order"],
                    _text_hash(self.version),
                    _text_hash(self.solver_chain_id),
                    bytes(12) + bytes.fromhex(self.solver.removeprefix("0x")),
                    _uint256(self.salt),
                    _hash(b"".join(_input_hash(i) for i in self.inputs)),
                    _output_hash(self.output),
                    _hash(b"".join(_fee_hash(f) for f in self.fees)),
                )
            )
        )

    def wire(self) -> dict[str, Any]:
        """`protocol.v2.orderData`: the same fields, amounts as strings, bytes as 0x-hex."""
        return self._message(str, _hex)


def _input_hash(item: OrderInput) -> bytes:
    payment = _hash(
        b"".join(
            (
                _TYPE_HASH["InputPayment"],
                _text_hash(item.chain_id),
                _bytes_hash(item.currency),
                _uint256(item.amount),
                _uint256(item.weight),
            )
        )
    )
    refunds = _hash(b"".join(_refund_hash(refund) for refund in item.refunds))
    return _hash(_TYPE_HASH["Input"] + payment + refunds)


def _refund_hash(refund: InputRefund) -> bytes:
    return _hash(
        b"".join(
            (
                _TYPE_HASH["InputRefund"],
                _text_hash(refund.chain_id),
                _bytes_hash(refund.recipient),
                _bytes_hash(refund.currency),
                _uint256(refund.minimum_amount),
                _uint32(refund.deadline),
                _bytes_hash(refund.extra_data),
            )
        )
    )


def _output_hash(output: OrderOutput) -> bytes:
    payments = b"".join(
        _hash(
            b"".join(
                (
                    _TYPE_HASH["OutputPayment"],
                    _bytes_hash(payment.recipient),
                    _bytes_hash(payment.currency),
                    _uint256(payment.minimum_amount),
                    _uint256(payment.expected_amount),
                )
            )
        )
        for payment in output.payments
    )
    return _hash(
        b"".join(
            (
                _TYPE_HASH["Output"],
                _text_hash(output.chain_id),
                _hash(payments),
                _uint32(output.deadline),
                _hash(b"".join(_hash(call) for call in output.calls)),
                _bytes_hash(output.extra_data),
            )
        )
    )


def _fee_hash(fee: OrderFee) -> bytes:
    return _hash(
        b"".join(
            (
                _TYPE_HASH["Fee"],
                _text_hash(fee.recipient_chain_id),
                _bytes_hash(fee.recipient),
                _text_hash(fee.currency_chain_id),
                _bytes_hash(fee.currency),
                _uint256(fee.amount),
            )
        )
    )


def _same(value: Any) -> Any:
    return value


def sign_order_id(solver: LocalAccount, order_id: bytes) -> str:
    """`protocol.v2.orderSignature`: the solver's EIP-191 signature of the raw orderId bytes."""
    signed = solver.sign_message(encode_defunct(primitive=order_id))
    return "0x" + bytes(signed.signature).hex()


def order_signer(order_id: bytes, signature: str) -> str:
    """The address that produced an `orderSignature` (checksummed)."""
    signer: str = Account.recover_message(encode_defunct(primitive=order_id), signature=signature)
    return signer
