"""Wallets from keys, for `execute` (the `signing` extra: eth-account and solders).

```python
signer = Signer(evm=EvmWallet.from_key("0x..."), svm=SvmWallet.from_base58("..."))
```
"""

from __future__ import annotations

from typing import cast

from eth_account import Account
from eth_account.datastructures import SignedSetCodeAuthorization
from eth_account.messages import encode_defunct, encode_typed_data
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from eth_utils.address import to_checksum_address
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from crossfill_client.errors import ExecutionError
from crossfill_client.models.gasless import Authorization
from crossfill_client.models.quote import SvmInstruction
from crossfill_client.signers import (
    EvmTransaction,
    SignedTransaction,
    Signer,
    SvmTransaction,
    TypedData,
)

__all__ = ["EvmWallet", "Signer", "SvmWallet", "sign_authorization"]


class EvmWallet:
    """An eth-account key: signs EIP-1559 transactions, EIP-712 typed data and EIP-191
    messages."""

    def __init__(self, account: LocalAccount) -> None:
        self.account = account

    @classmethod
    def from_key(cls, private_key: str | bytes) -> EvmWallet:
        account: LocalAccount = Account.from_key(private_key)
        return cls(account)

    @property
    def address(self) -> str:
        return str(self.account.address)

    def sign_transaction(self, transaction: EvmTransaction) -> SignedTransaction:
        signed = self.account.sign_transaction(
            {
                "type": 2,
                "chainId": transaction.chain_id,
                "nonce": transaction.nonce,
                "to": to_checksum_address(transaction.to),
                "data": HexStr(transaction.data),
                "value": transaction.value,
                "gas": transaction.gas,
                "maxFeePerGas": transaction.max_fee_per_gas,
                "maxPriorityFeePerGas": transaction.max_priority_fee_per_gas,
            }
        )
        return SignedTransaction(raw=bytes(signed.raw_transaction), id=signed.hash.to_0x_hex())

    def sign_typed_data(self, typed_data: TypedData) -> str:
        signed = self.account.sign_message(encode_typed_data(full_message=typed_data))
        return "0x" + bytes(signed.signature).hex()

    def sign_message(self, message: str) -> str:
        if message.startswith("0x"):
            encoded = encode_defunct(hexstr=message)
        else:
            encoded = encode_defunct(text=message)
        return "0x" + bytes(self.account.sign_message(encoded).signature).hex()


class SvmWallet:
    """A solders keypair; `fee_payer`, when another account pays the transactions' fees
    (a quote's `depositFeePayer`), signs beside it."""

    def __init__(self, keypair: Keypair, *, fee_payer: Keypair | None = None) -> None:
        self.keypair = keypair
        self.fee_payer = fee_payer

    @classmethod
    def from_base58(cls, secret_key: str) -> SvmWallet:
        """From a 64-byte secret key in base58 (what wallets export)."""
        return cls(Keypair.from_base58_string(secret_key))

    @property
    def public_key(self) -> str:
        return str(self.keypair.pubkey())

    def sign_transaction(self, transaction: SvmTransaction) -> SignedTransaction:
        message = Message.new_with_blockhash(
            [_instruction(wire) for wire in transaction.instructions],
            Pubkey.from_string(transaction.fee_payer),
            Hash.from_string(transaction.recent_blockhash),
        )
        held = {keypair.pubkey(): keypair for keypair in (self.keypair, self.fee_payer) if keypair}
        required = message.account_keys[: message.header.num_required_signatures]
        missing = [str(key) for key in required if key not in held]
        if missing:
            raise ExecutionError(f"the transaction needs signatures of {', '.join(missing)}")
        signed = VersionedTransaction(message, [held[key] for key in required])
        return SignedTransaction(raw=bytes(signed), id=str(signed.signatures[0]))


def _instruction(wire: SvmInstruction) -> Instruction:
    accounts = [
        AccountMeta(Pubkey.from_string(key.pubkey), key.is_signer, key.is_writable)
        for key in wire.keys
    ]
    return Instruction(Pubkey.from_string(wire.program_id), bytes.fromhex(wire.data), accounts)


def sign_authorization(
    wallet: EvmWallet, *, chain_id: int, delegate: str, nonce: int
) -> Authorization:
    """The wallet's EIP-7702 authorization to run `delegate`'s code from its account `nonce`
    on (the account's next transaction nonce), for `POST /execute`'s `authorizationList`."""
    # eth-account types the answer as a SignedMessage; it is a SignedSetCodeAuthorization.
    signed = cast(
        SignedSetCodeAuthorization,
        wallet.account.sign_authorization(
            {"chainId": chain_id, "address": to_checksum_address(delegate), "nonce": nonce}
        ),
    )
    return Authorization(
        chain_id=chain_id,
        address=delegate,
        nonce=nonce,
        y_parity=signed.y_parity,
        r=hex(signed.r),
        s=hex(signed.s),
    )
