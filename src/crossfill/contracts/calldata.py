"""Calldata for our contracts' entry points (pure encoding, shared by quotes and workers).

Selectors and argument types come from the compiled ABIs (`contracts.abi`)."""

from __future__ import annotations

from crossfill.contracts.abi import ERC20, function


def hex_data(calldata: bytes) -> str:
    return "0x" + calldata.hex()


# The Depository's `depositor` argument meaning "whoever sends this call": its deposit log then
# names the account that actually paid, whichever wallet runs the quote's step.
SENDER_DEPOSITS = "0x0000000000000000000000000000000000000000"


def deposit_native(depositor: str, order_id: bytes) -> bytes:
    return function("Depository", "depositNative").encode(depositor, order_id)


def deposit_erc20(depositor: str, token: str, amount: int, order_id: bytes) -> bytes:
    return function("Depository", "depositErc20", 4).encode(depositor, token, amount, order_id)


def erc20_approve(spender: str, amount: int) -> bytes:
    return function(ERC20, "approve").encode(spender, amount)


def erc20_transfer(to: str, amount: int) -> bytes:
    return function(ERC20, "transfer").encode(to, amount)


def erc20_transfer_from(owner: str, to: str, amount: int) -> bytes:
    return function(ERC20, "transferFrom").encode(owner, to, amount)


def erc20_transfer_tagged(to: str, amount: int, order_id: bytes) -> bytes:
    """An implicit deposit: a plain transfer whose calldata ends with the orderId."""
    return erc20_transfer(to, amount) + order_id


def filler_fill(
    order_id: bytes,
    payments: list[tuple[str, str, int]],
    calls: list[tuple[str, bool, int, bytes]] | None = None,
) -> bytes:
    """Filler.fill with the orderId appended for attribution (the ABI decoder ignores it)."""
    return function("Filler", "fill").encode(order_id, payments, calls or []) + order_id


def depository_execute(
    calls: list[tuple[str, bytes, int, bool]], nonce: int, expiration: int, signature: bytes
) -> bytes:
    """Depository.execute(CallRequest, signature): a payout authorised by the allocator."""
    return function("Depository", "execute").encode((calls, nonce, expiration), signature)


def deposit_erc20_with_authorization(
    depositor: str,
    token: str,
    amount: int,
    valid_before: int,
    order_id: bytes,
    signature: bytes,
) -> bytes:
    """Depository.depositErc20WithAuthorization: a gasless deposit (EIP-3009, valid from 0)."""
    return function("Depository", "depositErc20WithAuthorization").encode(
        depositor, token, amount, 0, valid_before, order_id, signature
    )
