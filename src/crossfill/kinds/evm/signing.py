"""A key signing transactions: its private key parsed once, not at each signature (eth-account
parses a key given as bytes again each time, an elliptic-curve multiplication)."""

from __future__ import annotations

from typing import Any

from eth_account import Account
from eth_account.datastructures import SignedTransaction
from eth_account.signers.local import LocalAccount
from eth_keys.datatypes import PrivateKey


class TransactionSigner:
    def __init__(self, account: LocalAccount) -> None:
        self._key = PrivateKey(account.key)

    def sign(self, fields: dict[str, Any]) -> SignedTransaction:
        """The transaction of `fields` signed, as `LocalAccount.sign_transaction` signs it."""
        signed: SignedTransaction = Account.sign_transaction(fields, self._key)
        return signed
