"""A gasless execution (POST /execute): a call a sponsor wallet sends, with the EIP-7702
authorizations it carries, and the checks made on it before it is accepted."""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.domain.set_code import Authorization, InvalidAuthorization
from crossfill.types import Address, ChainId

# The execution's transaction in the journal (`sent_transactions.purpose`).
PURPOSE = "execute"


class ExecutionRefused(ValueError):
    """The execution cannot be accepted as asked; the message names the field."""


@dataclass(frozen=True)
class ExecuteOrder:
    """What the client asked: call `to` with `data` and `value` on `chain_id` from the
    sponsor, carrying `authorizations`, for request `request_id`."""

    chain_id: ChainId
    to: Address
    data: bytes
    value: int
    authorizations: tuple[Authorization, ...]
    referrer: str | None
    subsidize_fees: bool
    request_id: str | None


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
