"""EIP-712 CallRequest: what the allocator signs to let the Depository pay something out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount

from crossfill.domain.eip712 import eip712_domain, eip712_types

DOMAIN_NAME = "CrossfillDepository"
# The Depository's revert when a request's nonce has paid out already: whatever was signed
# with that nonce executed once (perhaps sent by someone else), and nothing more can.
NONCE_ALREADY_USED = "NonceAlreadyUsed"
DOMAIN_VERSION = "1"
# Payouts signed over and over for one thing (an app-fee claim, a repayment) are valid this
# long from when it was recorded, then for the next period, and so on (`payout_expiration`).
AUTHORISATION_SECONDS = 7 * 24 * 3600
# An expiration this close on chain is neither used (the payout might not be mined in time)
# nor replaced yet (a payout signed with it might still execute).
EXPIRY_MARGIN_SECONDS = 600

CALL_REQUEST_TYPES = eip712_types(
    "CallRequest(Call[] calls,uint256 nonce,uint256 expiration)",
    "Call(address to,bytes data,uint256 value,bool allowFailure)",
)


@dataclass(frozen=True)
class DepositoryCall:
    to: str
    data: bytes
    value: int
    allow_failure: bool = False

    def as_tuple(self) -> tuple[str, bytes, int, bool]:
        return (self.to, self.data, self.value, self.allow_failure)


@dataclass(frozen=True)
class CallRequest:
    calls: tuple[DepositoryCall, ...]
    nonce: int
    expiration: int  # unix seconds

    def as_tuple(self) -> tuple[list[tuple[str, bytes, int, bool]], int, int]:
        return ([call.as_tuple() for call in self.calls], self.nonce, self.expiration)


def typed_data(request: CallRequest, *, chain_id: int, depository: str) -> dict[str, Any]:
    return {
        "domain": eip712_domain(DOMAIN_NAME, DOMAIN_VERSION, chain_id, depository),
        "types": CALL_REQUEST_TYPES,
        "primaryType": "CallRequest",
        "message": {
            "calls": [
                {"to": c.to, "data": c.data, "value": c.value, "allowFailure": c.allow_failure}
                for c in request.calls
            ],
            "nonce": request.nonce,
            "expiration": request.expiration,
        },
    }


def sign_call_request(
    signer: LocalAccount, request: CallRequest, *, chain_id: int, depository: str
) -> bytes:
    """65-byte r‖s‖v signature the Depository's `execute` accepts from its allocator."""
    message = encode_typed_data(
        full_message=typed_data(request, chain_id=chain_id, depository=depository)
    )
    signed = Account.sign_message(message, signer.key)
    return bytes(signed.signature)


def struct_hash(request: CallRequest, *, chain_id: int, depository: str) -> bytes:
    """hashStruct(CallRequest): the Depository's replay key for this request."""
    message = encode_typed_data(
        full_message=typed_data(request, chain_id=chain_id, depository=depository)
    )
    return bytes(message.body)


def payout_expiration(created_at: int, head_timestamp: int) -> int | None:
    """The expiration of payouts signed now for something recorded at `created_at`: the first
    `created_at + k * AUTHORISATION_SECONDS` (k >= 1) the chain's head has not passed; None
    while it is within the margin of passing.

    Every attempt in one period signs the same request; any earlier expiration is below the
    head's timestamp, so a payout signed with it can no longer execute: two differently signed
    payouts of one thing are never both valid.
    """
    elapsed = head_timestamp - created_at
    periods = max(1, -(-elapsed // AUTHORISATION_SECONDS))
    expiration = created_at + periods * AUTHORISATION_SECONDS
    if expiration - head_timestamp < EXPIRY_MARGIN_SECONDS:
        return None
    return expiration
