"""Call batches for the Router: AMM swaps, wraps, transfers, and the user's batch entry points.

A batch is a list of Multicall3 `Call3Value`s (target, allowFailure, value, callData). The same
swap batch serves a user's same-chain swap (through the ApprovalProxy or Router) and a solver's
destination swap (through the Filler), so both are built here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.contracts.abi import V2_ROUTER, function
from crossfill.contracts.calldata import erc20_approve, erc20_transfer

Call = tuple[str, bool, int, bytes]


@dataclass(frozen=True)
class SwapPlan:
    """One exact-input swap along a V2 path; `path` uses the wrapped native token."""

    router: str
    path: tuple[str, ...]
    native_in: bool
    native_out: bool
    amount_in: int
    minimum_out: int

    def to_json(self) -> dict[str, object]:
        return {
            "router": self.router,
            "path": list(self.path),
            "nativeIn": self.native_in,
            "nativeOut": self.native_out,
            "amountIn": str(self.amount_in),
            "minimumOut": str(self.minimum_out),
        }

    @classmethod
    def from_json(cls, stored: dict[str, object]) -> SwapPlan:
        path = stored["path"]
        assert isinstance(path, list)
        return cls(
            router=str(stored["router"]),
            path=tuple(str(token) for token in path),
            native_in=bool(stored["nativeIn"]),
            native_out=bool(stored["nativeOut"]),
            amount_in=int(str(stored["amountIn"])),
            minimum_out=int(str(stored["minimumOut"])),
        )


def swap_calls(plan: SwapPlan, recipient: str, deadline: int) -> list[Call]:
    """The swap paying `recipient` directly; tokens must already sit in the Router."""
    path = list(plan.path)
    if plan.native_in:
        data = function(V2_ROUTER, "swapExactETHForTokens").encode(
            plan.minimum_out, path, recipient, deadline
        )
        return [(plan.router, False, plan.amount_in, data)]
    swap = "swapExactTokensForETH" if plan.native_out else "swapExactTokensForTokens"
    data = function(V2_ROUTER, swap).encode(
        plan.amount_in, plan.minimum_out, path, recipient, deadline
    )
    return [
        (plan.path[0], False, 0, erc20_approve(plan.router, plan.amount_in)),
        (plan.router, False, 0, data),
    ]


def pay_calls(currency: str, native: bool, payments: list[tuple[str, int]]) -> list[Call]:
    """Transfers out of the Router: fees or the output itself."""
    if native:
        return [(recipient, False, amount, b"") for recipient, amount in payments if amount > 0]
    return [
        (currency, False, 0, erc20_transfer(recipient, amount))
        for recipient, amount in payments
        if amount > 0
    ]


def wrap_calls(weth: str, recipient: str, amount: int) -> list[Call]:
    return [
        (weth, False, amount, function("WETH", "deposit").encode()),
        (weth, False, 0, erc20_transfer(recipient, amount)),
    ]


def unwrap_calls(weth: str, recipient: str, amount: int) -> list[Call]:
    withdraw = function("WETH", "withdraw").encode(amount)
    return [(weth, False, 0, withdraw), (recipient, False, amount, b"")]


def sweep_call(router: str, token: str, recipient: str) -> Call:
    """The Router's own call sending whatever is left of `token` in it to `recipient`."""
    data = function("Router", "cleanupErc20s").encode([token], [recipient])
    return (router, False, 0, data)


def router_multicall(calls: list[Call], refund_to: str, metadata: bytes) -> bytes:
    return function("Router", "multicall").encode(calls, refund_to, refund_to, metadata)


def transfer_and_multicall(
    token: str, amount: int, calls: list[Call], refund_to: str, metadata: bytes
) -> bytes:
    """ApprovalProxy entry: pull `amount` of `token` from the caller into the Router, run."""
    return function("ApprovalProxy", "transferAndMulticall").encode(
        [token], [amount], calls, refund_to, refund_to, metadata
    )
