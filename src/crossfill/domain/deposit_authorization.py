"""A gasless ERC-20 deposit (`usePermit`): the user signs an EIP-3009 `ReceiveWithAuthorization`
paying the origin Depository, with the orderId as its nonce, and the service submits it
(`Depository.depositErc20WithAuthorization`).

The nonce binds the signature to the order: nobody can spend it on another order, and the
token lets it be used once. Amounts travel as decimal strings in the wire's `value` (they may
exceed what JSON numbers hold exactly); the two time bounds are Unix seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_keys.exceptions import BadSignature

from crossfill.domain.eip712 import EIP712_DOMAIN, eip712_domain, eip712_types

PRIMARY_TYPE = "ReceiveWithAuthorization"
SIGNATURE_KIND = "eip3009"
# The token's EIP-712 domain version: USDC's, and the devnet TestUSDC's.
TOKEN_DOMAIN_VERSION = "2"
_TYPE = (
    f"{PRIMARY_TYPE}(address from,address to,uint256 value,uint256 validAfter,"
    "uint256 validBefore,bytes32 nonce)"
)
TYPES = eip712_types(_TYPE)


@dataclass(frozen=True)
class DepositAuthorization:
    """What the user authorises: `amount` of `token` (named `token_name` in its EIP-712
    domain) from `depositor` to `depository` on `chain_id`, for order `order_id`."""

    chain_id: int
    token: str
    token_name: str
    depositor: str
    depository: str
    amount: int
    valid_after: int
    valid_before: int
    order_id: str  # 0x-prefixed 32 bytes: the authorization's nonce

    def domain(self) -> dict[str, Any]:
        return eip712_domain(self.token_name, TOKEN_DOMAIN_VERSION, self.chain_id, self.token)

    def value(self) -> dict[str, Any]:
        return {
            "from": self.depositor,
            "to": self.depository,
            "value": str(self.amount),
            "validAfter": str(self.valid_after),
            "validBefore": str(self.valid_before),
            "nonce": self.order_id,
        }

    def sign_data(self) -> dict[str, Any]:
        """The step item's `sign`: EIP-712 typed data as a wallet's `signTypedData` takes it."""
        return {
            "signatureKind": "eip712",
            "domain": self.domain(),
            "types": TYPES,
            "primaryType": PRIMARY_TYPE,
            "value": self.value(),
        }

    def _message(self) -> Any:
        value = {
            **self.value(),
            "value": self.amount,
            "validAfter": self.valid_after,
            "validBefore": self.valid_before,
            "nonce": bytes.fromhex(self.order_id[2:]),
        }
        return encode_typed_data(
            full_message={
                "types": eip712_types(EIP712_DOMAIN, _TYPE),
                "domain": self.domain(),
                "primaryType": PRIMARY_TYPE,
                "message": value,
            }
        )

    def signer(self, signature: bytes) -> str | None:
        """Who signed this authorization (checksummed), or None for a malformed signature."""
        try:
            signer: str = Account.recover_message(self._message(), signature=signature)
        except (BadSignature, ValueError):
            return None
        return signer

    def sign(self, private_key: bytes) -> bytes:
        """The depositor's signature (tests and tools sign as a wallet would)."""
        return bytes(Account.sign_message(self._message(), private_key).signature)
