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


def filler_fill_exclusive(
    order_id: bytes,
    payments: list[tuple[str, str, int]],
    exclusivity: tuple[str, int, int],
    signature: bytes,
) -> bytes:
    """Filler.fillExclusive(orderId, payments, exclusivity, signature), the orderId appended
    for attribution as with `filler_fill`."""
    encoded = function("Filler", "fillExclusive").encode(order_id, payments, exclusivity, signature)
    return encoded + order_id


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


def multicall(calls: list[tuple[str, bool, bytes]]) -> bytes:
    """Multicaller.aggregate3: each (target, allowFailure, callData) called in turn; a call
    allowed to fail that reverts leaves the others to run."""
    return function("Multicaller", "aggregate3").encode(calls)


def multicall_results(returned: bytes) -> list[tuple[bool, bytes]]:
    """What Multicaller.aggregate3 returned: each call's (success, its return or revert data)."""
    (results,) = function("Multicaller", "aggregate3").decode_output(returned)
    return [(bool(success), bytes(data)) for success, data in results]


def depository_nonce_used(nonce: int) -> bytes:
    """Depository.nonceUsed(nonce): whether a payout under it executed (read with a call)."""
    return function("Depository", "nonceUsed").encode(nonce)


def nonce_used_answer(returned: bytes) -> bool:
    (used,) = function("Depository", "nonceUsed").decode_output(returned)
    return bool(used)


def solver_bond_of(solver: str, currency: str) -> bytes:
    """SolverBond.bondOf(solver, currency): what the solver has bonded (read with a call)."""
    return function("SolverBond", "bondOf").encode(solver, currency)


def solver_bond_debit(solver: str, currency: str, amount: int, to: str, order_id: bytes) -> bytes:
    """SolverBond.debit(solver, currency, amount, to, orderId): the allocator takes `amount`
    of the solver's bond and pays it to `to`."""
    return function("SolverBond", "debit").encode(solver, currency, amount, to, order_id)


def solver_bond_pending(solver: str, currency: str) -> bytes:
    """SolverBond.pendingWithdrawal(solver, currency): the amount on its way out, and when."""
    return function("SolverBond", "pendingWithdrawal").encode(solver, currency)


def pending_answer(returned: bytes) -> int:
    amount, _unlocks_at = function("SolverBond", "pendingWithdrawal").decode_output(returned)
    return int(amount)


def bond_answer(returned: bytes) -> int:
    (bond,) = function("SolverBond", "bondOf").decode_output(returned)
    return int(bond)
