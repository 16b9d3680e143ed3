"""What `execute` asks of a wallet, as protocols: an EVM signer (transactions, EIP-712 typed
data, EIP-191 messages) and an SVM signer (transactions from instructions). The client never
holds a key: `crossfill_client.signing` implements these with eth-account and solders (the
`signing` extra); any other wallet may implement them instead."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from pydantic import JsonValue

from crossfill_client.models.quote import SvmInstruction

TypedData = dict[str, JsonValue]


@dataclass(frozen=True)
class EvmTransaction:
    """An EIP-1559 transaction to sign; `data` is 0x-hex."""

    chain_id: int
    nonce: int
    to: str
    data: str
    value: int
    gas: int
    max_fee_per_gas: int
    max_priority_fee_per_gas: int


@dataclass(frozen=True)
class SvmTransaction:
    """Instructions to compile into one transaction on `recent_blockhash`, paid by
    `fee_payer` (base58)."""

    instructions: tuple[SvmInstruction, ...]
    recent_blockhash: str
    fee_payer: str


@dataclass(frozen=True)
class SignedTransaction:
    """What is broadcast (`raw`) and how the chain will name it (`id`: an EVM transaction
    hash, 0x-hex; an SVM transaction's first signature, base58)."""

    raw: bytes
    id: str


class EvmSigner(Protocol):
    @property
    def address(self) -> str: ...

    def sign_transaction(self, transaction: EvmTransaction) -> SignedTransaction: ...

    def sign_typed_data(self, typed_data: TypedData) -> str:
        """The 65-byte signature (0x-hex) of a full EIP-712 document (`types` with
        `EIP712Domain`, `domain`, `primaryType`, `message`)."""
        ...

    def sign_message(self, message: str) -> str:
        """The EIP-191 signature (0x-hex) of `message`: its bytes when it is 0x-hex, else its
        UTF-8 text."""
        ...


class SvmSigner(Protocol):
    @property
    def public_key(self) -> str: ...

    def sign_transaction(self, transaction: SvmTransaction) -> SignedTransaction: ...


@dataclass(frozen=True)
class Signer:
    """The user's wallets, one per kind of chain a quote may ask to sign on (either may be
    missing when no step needs it)."""

    evm: EvmSigner | None = None
    svm: SvmSigner | None = None
