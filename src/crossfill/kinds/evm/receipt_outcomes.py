"""What a mined transaction cost and moved, read from its receipt: the fee paid for it, a
swap's output, a Depository payout. Events are decoded with the compiled ABIs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from crossfill.contracts.events import decode_events
from crossfill.types import NATIVE_EVM_ADDRESS

# Any ERC-20's `Transfer` has the one standard shape; our test token's ABI carries it.
ERC20_ABI_SOURCE = "TestUSDC"


def fee_paid(receipt: Any) -> int:
    """What the sender paid for the transaction, in wei: gas used times the effective gas price."""
    return int(receipt["gasUsed"]) * int(receipt["effectiveGasPrice"])


def swap_output(logs: Iterable[Any], to: str) -> int:
    """What Uniswap V2 pairs sent to `to` in these logs: a swap's last hop pays its output to
    the recipient (or to the swap router, which unwraps it into ether for the recipient)."""
    return sum(
        int(event.args["amount0Out"]) + int(event.args["amount1Out"])
        for event in decode_events(logs, "UniswapV2Pair", "Swap")
        if str(event.args["to"]).lower() == to.lower()
    )


def depository_payout(
    logs: Iterable[Any], *, depository: str, currency: str, recipient: str
) -> int:
    """What the Depository paid `recipient` in `currency` in these logs: the value of its
    executed calls for ether, the token's transfers out of it otherwise."""
    logs = list(logs)
    if currency.lower() == NATIVE_EVM_ADDRESS:
        # CallExecuted(id, (to, data, value, allowFailure)); an ether payout has no calldata.
        return sum(
            int(call[2])
            for event in decode_events(logs, "Depository", "CallExecuted")
            if event.address == depository.lower()
            and (call := event.args["call"])[0].lower() == recipient.lower()
            and not call[1]
        )
    return sum(
        int(event.args["value"])
        for event in decode_events(logs, ERC20_ABI_SOURCE, "Transfer")
        if event.address == currency.lower()
        and str(event.args["from"]).lower() == depository.lower()
        and str(event.args["to"]).lower() == recipient.lower()
    )


def paid_to(logs: Iterable[Any], *, currency: str, recipient: str) -> int:
    """What these logs paid `recipient` in `currency`, whoever paid it: for ether, the calls a
    Depository executed paying it (`CallExecuted` with no calldata); for a token, its
    transfers to it. (A bridge speaking this interface refunds out of its Depository.)"""
    logs = list(logs)
    if currency.lower() == NATIVE_EVM_ADDRESS:
        return sum(
            int(call[2])
            for event in decode_events(logs, "Depository", "CallExecuted")
            if (call := event.args["call"])[0].lower() == recipient.lower() and not call[1]
        )
    return sum(
        int(event.args["value"])
        for event in decode_events(logs, ERC20_ABI_SOURCE, "Transfer")
        if event.address == currency.lower() and str(event.args["to"]).lower() == recipient.lower()
    )


def executed_payouts(logs: Iterable[Any], *, depository: str) -> set[str]:
    """The payouts the Depository executed in these logs, by their EIP-712 hash (its
    `CallExecuted` id, 0x-prefixed)."""
    return {
        "0x" + bytes(event.args["id"]).hex()
        for event in decode_events(logs, "Depository", "CallExecuted")
        if event.address == depository.lower()
    }


def order_filler(logs: Iterable[Any], filler: str, order_id: str) -> str | None:
    """Who the Filler at `filler` logged as filling `order_id` (`OrderFilled`'s solver, lower
    case), if it did in these logs."""
    wanted = bytes.fromhex(order_id.removeprefix("0x"))
    return next(
        (
            str(event.args["solver"]).lower()
            for event in decode_events(logs, "Filler", "OrderFilled")
            if event.address == filler.lower() and bytes(event.args["orderId"]) == wanted
        ),
        None,
    )
