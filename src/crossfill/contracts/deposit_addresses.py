"""Deposit addresses: where each one is (CREATE2 of an EIP-1167 clone, computed without a
chain), the factory's calldata to sweep one into the Depository, and the recovery signature.

The factory (`DepositAddressFactory`) deploys `DepositAddress` as its first contract, so the
implementation lives at the factory's CREATE address for nonce 1 (EIP-161 starts contract
nonces at 1). A clone's salt is keccak256(abi.encode(key, recoveryAddress)).
"""

from __future__ import annotations

from dataclasses import dataclass

from eth_abi.abi import encode
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from crossfill.contracts.abi import function
from crossfill.domain.eip712 import EIP712_DOMAIN, eip712_domain, eip712_types

NO_RECOVERY = "0x0000000000000000000000000000000000000000"
NATIVE = NO_RECOVERY
_CLONE_PREFIX = bytes.fromhex("3d602d80600a3d3981f3363d3d373d3d3d363d73")
_CLONE_SUFFIX = bytes.fromhex("5af43d82803e903d91602b57fd5bf3")


def _raw(address: str) -> bytes:
    return bytes.fromhex(address[2:])


def implementation_of(factory: str) -> str:
    """The factory's DepositAddress: CREATE from the factory at nonce 1 (RLP [factory, 1])."""
    encoded = bytes([0xD6, 0x94]) + _raw(factory) + bytes([0x01])
    return to_checksum_address(keccak(encoded)[12:])


def clone_salt(key: bytes, recovery_address: str | None) -> bytes:
    return keccak(encode(["bytes32", "address"], [key, recovery_address or NO_RECOVERY]))


def deposit_address(factory: str, key: bytes, recovery_address: str | None) -> str:
    """The address funds for `key` are sent to, deployed or not (lower case)."""
    init_code = _CLONE_PREFIX + _raw(implementation_of(factory)) + _CLONE_SUFFIX
    digest = keccak(b"\xff" + _raw(factory) + clone_salt(key, recovery_address) + keccak(init_code))
    return "0x" + digest[12:].hex()


@dataclass(frozen=True)
class Sweep:
    """One transfer held by a deposit address, deposited into the Depository for an order."""

    key: bytes
    recovery_address: str | None
    currency: str
    amount: int
    depositor: str
    order_id: bytes

    def calldata(self) -> bytes:
        return function("DepositAddressFactory", "sweep").encode(
            self.key,
            self.recovery_address or NO_RECOVERY,
            self.currency,
            self.amount,
            self.depositor,
            self.order_id,
        )


@dataclass(frozen=True)
class Recovery:
    """What a recovery address signs to take `amount` of `currency` from its deposit address."""

    factory: str
    chain_id: int
    key: bytes
    recovery_address: str
    currency: str
    amount: int
    nonce: int
    deadline: int

    def typed_data(self) -> dict[str, object]:
        return {
            "types": eip712_types(
                EIP712_DOMAIN,
                "Recover(address depositAddress,address token,uint256 amount,uint256 nonce,"
                "uint256 deadline)",
            ),
            "primaryType": "Recover",
            "domain": eip712_domain(
                "CrossfillDepositAddress", "1", self.chain_id, to_checksum_address(self.factory)
            ),
            "message": {
                "depositAddress": to_checksum_address(
                    deposit_address(self.factory, self.key, self.recovery_address)
                ),
                "token": to_checksum_address(self.currency),
                "amount": self.amount,
                "nonce": self.nonce,
                "deadline": self.deadline,
            },
        }

    def sign(self, account: LocalAccount) -> bytes:
        signed = account.sign_message(encode_typed_data(full_message=self.typed_data()))
        return bytes(signed.signature)

    def calldata(self, signature: bytes) -> bytes:
        return function("DepositAddressFactory", "recover").encode(
            self.key,
            self.recovery_address,
            self.currency,
            self.amount,
            self.nonce,
            self.deadline,
            signature,
        )
