"""What the reference solver signs and checks: the service's bid request and its own bid,
both EIP-712 (domain `CrossfillRfq`/`1`, the destination chain, its `SolverBond`), written
from docs/solvers.md alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount

DOMAIN_TYPE = [
    {"name": "name", "type": "string"},
    {"name": "version", "type": "string"},
    {"name": "chainId", "type": "uint256"},
    {"name": "verifyingContract", "type": "address"},
]
BID_REQUEST_TYPE = [
    {"name": "quoteId", "type": "bytes32"},
    {"name": "originChainId", "type": "uint256"},
    {"name": "destinationChainId", "type": "uint256"},
    {"name": "currencyIn", "type": "address"},
    {"name": "currencyOut", "type": "address"},
    {"name": "amountIn", "type": "uint256"},
    {"name": "recipient", "type": "address"},
    {"name": "expiry", "type": "uint256"},
]
BID_TYPE = [
    {"name": "quoteId", "type": "bytes32"},
    {"name": "solver", "type": "address"},
    {"name": "output", "type": "uint256"},
    {"name": "expiry", "type": "uint256"},
]


@dataclass(frozen=True)
class BidRequest:
    quote_id: str
    origin_chain_id: int
    destination_chain_id: int
    currency_in: str
    currency_out: str
    amount_in: int
    recipient: str
    expiry: int
    domain: dict[str, Any]

    @classmethod
    def of(cls, body: dict[str, Any]) -> BidRequest:
        request = body["request"]
        return cls(
            quote_id=str(request["quoteId"]),
            origin_chain_id=int(request["originChainId"]),
            destination_chain_id=int(request["destinationChainId"]),
            currency_in=str(request["currencyIn"]).lower(),
            currency_out=str(request["currencyOut"]).lower(),
            amount_in=int(request["amountIn"]),
            recipient=str(request["recipient"]),
            expiry=int(request["expiry"]),
            domain=dict(body["domain"]),
        )

    def message(self) -> dict[str, Any]:
        return {
            "quoteId": self.quote_id,
            "originChainId": self.origin_chain_id,
            "destinationChainId": self.destination_chain_id,
            "currencyIn": self.currency_in,
            "currencyOut": self.currency_out,
            "amountIn": self.amount_in,
            "recipient": self.recipient,
            "expiry": self.expiry,
        }


def request_signer(request: BidRequest, signature: str) -> str:
    """Who signed the request (the solver checks it is the operator's solver address)."""
    typed = {
        "types": {"EIP712Domain": DOMAIN_TYPE, "BidRequest": BID_REQUEST_TYPE},
        "primaryType": "BidRequest",
        "domain": request.domain,
        "message": request.message(),
    }
    signable = encode_typed_data(full_message=typed)
    signer: str = Account.recover_message(signable, signature=signature)
    return signer


def signed_bid(
    account: LocalAccount, request: BidRequest, output: int, *, valid_for: int
) -> dict[str, Any]:
    """The bid as answered: firm for `output` until `valid_for` seconds past the quote's
    expiry."""
    expiry = request.expiry + valid_for
    typed = {
        "types": {"EIP712Domain": DOMAIN_TYPE, "Bid": BID_TYPE},
        "primaryType": "Bid",
        "domain": request.domain,
        "message": {
            "quoteId": request.quote_id,
            "solver": account.address,
            "output": output,
            "expiry": expiry,
        },
    }
    signed = account.sign_message(encode_typed_data(full_message=typed))
    return {
        "quoteId": request.quote_id,
        "solver": account.address,
        "output": str(output),
        "expiry": expiry,
        "signature": "0x" + bytes(signed.signature).hex(),
    }
