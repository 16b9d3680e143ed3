"""A gasless execution (POST /execute): a call a sponsor wallet sends, with the EIP-7702
authorizations it carries, the checks made on it before it is accepted, and what its mined
transaction does to its request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crossfill.domain.set_code import Authorization, InvalidAuthorization, is_delegated
from crossfill.domain.status import RequestStatus
from crossfill.types import Address, ChainId

# The execution's transaction in the journal (`sent_transactions.purpose`).
PURPOSE = "execute"


class ExecutionRefused(ValueError):
    """The execution cannot be accepted as asked; the message names the field."""


@dataclass(frozen=True)
class ExecuteOrder:
    """What the client asked: call `to` with `data` and `value` on `chain_id` from the
    sponsor, carrying `authorizations`, for request `request_id` (None: a raw call, which
    pays a quoted request if it deposits for one, else is a request of its own)."""

    chain_id: ChainId
    to: Address
    data: bytes
    value: int
    authorizations: tuple[Authorization, ...]
    referrer: str | None
    subsidize_fees: bool
    request_id: str | None


def rpc_call(order: ExecuteOrder, sender: Address, *, gas: int | None = None) -> dict[str, Any]:
    """The call as JSON-RPC simulations take it (quantities in hex), from `sender`."""
    call: dict[str, Any] = {
        "from": sender,
        "to": order.to,
        "data": "0x" + order.data.hex(),
        "value": hex(order.value),
    }
    if gas is not None:
        call["gas"] = hex(gas)
    if order.authorizations:
        call["authorizationList"] = [entry.for_rpc() for entry in order.authorizations]
    return call


def authorities(order: ExecuteOrder) -> list[Address]:
    """The signer of each authorization, in order; refused when one is for another chain, does
    not recover, is not the called account's (`data.to`: the sponsor pays to delegate the
    account the call runs on, no other), or two come from one account."""
    found: list[Address] = []
    for index, authorization in enumerate(order.authorizations):
        field = f"data.authorizationList[{index}]"
        if authorization.chain_id not in (0, order.chain_id):
            raise ExecutionRefused(
                f"{field}.chainId must be 0 or {order.chain_id}, not {authorization.chain_id}"
            )
        try:
            authority = authorization.authority()
        except InvalidAuthorization as exc:
            raise ExecutionRefused(f"{field}: {exc}") from None
        if authority.lower() != order.to.lower():
            raise ExecutionRefused(
                f"{field} is signed by {authority}, not by the called account {order.to}"
            )
        if authority.lower() in {seen.lower() for seen in found}:
            raise ExecutionRefused(f"{field}: a second authorization of {authority}")
        found.append(authority)
    return found


def check_sponsorable(order: ExecuteOrder, code_of_to: bytes, *, opens_order: bool) -> None:
    """The sponsor sends only two kinds of call: into an account that delegates its code
    (EIP-7702: authorized in this call, or already delegated on chain, `code_of_to`), so
    what runs is the account's own delegate acting as that account, never the sponsor calling
    a contract in its own name (a token's `transfer` would spend the sponsor's funds); and
    without ether of the sponsor's (`value` 0: the sponsor pays gas, nothing else).
    `opens_order`: the call is `openFor` on the chain's ERC-7683 origin settler for a request
    (what the OIF order path submits); it takes only the signing user's funds, never its
    sender's, so the sponsor may send it."""
    if order.value != 0:
        raise ExecutionRefused(
            "data.value must be 0: the sponsor pays the gas, not the call's ether"
        )
    if opens_order and not order.authorizations:
        return
    if not order.authorizations and not is_delegated(code_of_to):
        raise ExecutionRefused(
            f"data.to {order.to} is not an EIP-7702 delegated account and the call carries "
            "no authorization for it: the sponsor only calls into delegated accounts"
        )


def check_nonces(order: ExecuteOrder, authorities: list[Address], nonces: list[int]) -> None:
    """Each authorization's nonce must be its authority's nonce on chain now (a chain skips
    an authorization whose nonce is not), so a reused or future nonce is refused here."""
    for index, (authorization, authority, nonce) in enumerate(
        zip(order.authorizations, authorities, nonces, strict=True)
    ):
        if authorization.nonce != nonce:
            raise ExecutionRefused(
                f"data.authorizationList[{index}].nonce is {authorization.nonce}, but the "
                f"nonce of {authority} on chain {order.chain_id} is {nonce}"
            )


# A sponsored call whose transaction mined but made no deposit for its request.
NO_DEPOSIT_REASON = "INCORRECT_PAYMENT"
REVERTED_REASON = "TRANSACTION_REVERTED"


@dataclass(frozen=True)
class RevertFacts:
    """What a reverted call said, as far as it can be read: the error's name ("" when it
    matches no known error), its text, and the raw revert data."""

    error: str
    message: str
    data: bytes


@dataclass(frozen=True)
class FailureDetails:
    """Why a gasless execution failed its request, beyond the fail reason: shown as the status
    record's `details` (and v2's `data.details`), stored with the request."""

    message: str
    tx_hash: str
    revert: RevertFacts | None = None

    def to_json(self) -> dict[str, Any]:
        """The stored form, which is also the wire's `details`."""
        revert = self.revert
        return {
            "message": self.message,
            "txHash": self.tx_hash,
            "revert": None
            if revert is None
            else {"error": revert.error or None, "data": "0x" + revert.data.hex()},
        }


@dataclass(frozen=True)
class MinedExecution:
    """A gasless execution's transaction as mined: whether it ran without reverting, and
    whether its logs pay its request (a Depository deposit for the request's order, or a
    same-chain request's Router batch). A standalone call has no request to pay."""

    tx_hash: str
    succeeded: bool
    paid_request: bool
    standalone: bool


@dataclass(frozen=True)
class Settlement:
    """What a mined execution does to its request: `status` None leaves it to the deposit's
    own path (the indexer moves a paid request on); else the request moves there."""

    status: RequestStatus | None
    fail_reason: str | None = None
    details: FailureDetails | None = None


def settlement(mined: MinedExecution, revert: RevertFacts | None) -> Settlement:
    """A standalone call succeeds when it mined without reverting; a call for a quoted request
    leaves that request to the deposit it made. A revert fails either (with what it said,
    when the replay could read it); a call for a quoted request that mined without paying it
    fails that request: nothing was deposited, so nothing is refunded."""
    if not mined.succeeded:
        said = revert.message if revert is not None else "no revert reason could be read"
        return Settlement(
            RequestStatus.FAILURE,
            REVERTED_REASON,
            FailureDetails(f"the sponsored call reverted: {said}", mined.tx_hash, revert),
        )
    if mined.standalone:
        return Settlement(RequestStatus.SUCCESS)
    if mined.paid_request:
        return Settlement(None)
    return Settlement(
        RequestStatus.FAILURE,
        NO_DEPOSIT_REASON,
        FailureDetails(
            "the sponsored call mined without reverting but made no deposit for this request",
            mined.tx_hash,
        ),
    )
