"""The quote's `steps`: what the user signs and sends, in order."""

from __future__ import annotations

from typing import Any

from crossfill.contracts import calldata
from crossfill.contracts.router_calls import (
    Call,
    pay_calls,
    router_multicall,
    swap_calls,
    transfer_and_multicall,
    unwrap_calls,
    wrap_calls,
)
from crossfill.quoting.engine import Quote
from crossfill.quoting.legs import RouteKind
from crossfill.quoting.permits import permit_item


def check(request_id: str) -> dict[str, str]:
    return {"endpoint": f"/intents/status/v3?requestId={request_id}", "method": "GET"}


def spender(quote: Quote) -> str:
    """The contract an ERC-20 input must be approved to."""
    contracts = quote.origin.contracts
    return contracts.approval_proxy if quote.kind.same_chain else contracts.depository


def _transaction_item(
    quote: Quote, to: str, data: bytes, value: int, with_check: bool, gas: int | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "status": "incomplete",
        "data": {
            "from": quote.user,
            "to": to.lower(),
            "data": calldata.hex_data(data),
            "value": str(value),
            "chainId": quote.origin.id,
        },
    }
    if gas is not None:
        item["data"]["gas"] = str(gas)
    if with_check:
        item["check"] = check(quote.request_id)
    return item


def transaction_step(
    request_id: str, step_id: str, description: str, item: dict[str, Any]
) -> dict[str, Any]:
    """A step of one transaction for the user's wallet to send."""
    return {
        "id": step_id,
        "action": "Confirm transaction in your wallet",
        "description": description,
        "kind": "transaction",
        "requestId": request_id,
        "depositAddress": "",
        "items": [item],
    }


def deposit_target(quote: Quote) -> str:
    """Where the deposit is paid: the Depository, or (v1) the Receiver, which forwards it to
    the solver."""
    contracts = quote.origin.contracts
    return contracts.receiver if quote.paid_to_solver else contracts.depository


def _deposit_call(quote: Quote) -> tuple[str, bytes, int]:
    order_id = bytes.fromhex(quote.order_id[2:])
    amount = quote.split.amount_in
    if quote.paid_to_solver:  # the Receiver's fallback forwards the ether, logging the id
        return quote.origin.contracts.receiver, order_id, amount
    depository = quote.origin.contracts.depository
    if quote.currency_in.is_native:
        return depository, calldata.deposit_native(calldata.SENDER_DEPOSITS, order_id), amount
    if not quote.explicit_deposit:
        return (
            quote.currency_in.address,
            calldata.erc20_transfer_tagged(depository, amount, order_id),
            0,
        )
    return (
        depository,
        calldata.deposit_erc20(
            calldata.SENDER_DEPOSITS, quote.currency_in.address, amount, order_id
        ),
        0,
    )


def same_chain_calls(quote: Quote) -> list[Call]:
    """The Router batch of a same-chain request: fees out, then the swap, wrap or send."""
    split = quote.split
    currency = quote.currency_in
    fees = [
        (share.recipient, amount) for share, amount in zip(quote.app_fees, split.app, strict=True)
    ]
    fees.append((quote.order.solver, split.relayer_service))
    calls = pay_calls(currency.address, currency.is_native, fees)
    weth = quote.origin.contracts.weth or ""
    match quote.kind:
        case RouteKind.SAME_CHAIN_SWAP:
            assert quote.swap_plan is not None
            deadline = int(quote.expires_at.timestamp())
            calls += swap_calls(quote.swap_plan, quote.recipient, deadline)
        case RouteKind.WRAP:
            calls += wrap_calls(weth, quote.recipient, split.leg_input)
        case RouteKind.UNWRAP:
            calls += unwrap_calls(weth, quote.recipient, split.leg_input)
        case _:
            calls += pay_calls(
                currency.address, currency.is_native, [(quote.recipient, split.leg_input)]
            )
    return calls


# Gas limits of a same-chain batch: the entry (token pull, Router, event), each plain call, and
# each pool a swap crosses. A pool's first swap in a block also writes its price accumulators,
# which a node's estimate against the current block misses; the limit leaves room for it.
BATCH_ENTRY_GAS = 100_000
BATCH_CALL_GAS = 50_000
POOL_HOP_GAS = 150_000


def batch_gas_limit(quote: Quote, calls: list[Call]) -> int:
    hops = len(quote.swap_plan.path) - 1 if quote.swap_plan else 0
    plain_calls = len(calls) - (1 if quote.swap_plan else 0)
    return BATCH_ENTRY_GAS + BATCH_CALL_GAS * plain_calls + POOL_HOP_GAS * hops


def _same_chain_call(quote: Quote) -> tuple[str, bytes, int, int]:
    """(to, calldata, value, gas limit) of the user's batch."""
    calls = same_chain_calls(quote)
    gas = batch_gas_limit(quote, calls)
    metadata = bytes.fromhex(quote.request_id[2:])
    contracts = quote.origin.contracts
    amount = quote.split.amount_in
    if quote.currency_in.is_native:
        return contracts.router, router_multicall(calls, quote.user, metadata), amount, gas
    data = transfer_and_multicall(quote.currency_in.address, amount, calls, quote.user, metadata)
    return contracts.approval_proxy, data, 0, gas


def _main_step(quote: Quote) -> dict[str, Any]:
    symbol_in, symbol_out = quote.currency_in.symbol, quote.currency_out.symbol
    gas: int | None = None
    if not quote.kind.same_chain:
        to, data, value = _deposit_call(quote)
        description = f"Depositing {symbol_in} to bridge to chain {quote.destination.id}"
        step_id = "deposit"
    else:
        to, data, value, gas = _same_chain_call(quote)
        step_id = "send" if quote.kind is RouteKind.SEND else "swap"
        description = {
            RouteKind.SEND: f"Sending {symbol_in}",
            RouteKind.WRAP: f"Wrapping {symbol_in} into {symbol_out}",
            RouteKind.UNWRAP: f"Unwrapping {symbol_in} into {symbol_out}",
        }.get(quote.kind, f"Swapping {symbol_in} for {symbol_out}")
    return transaction_step(
        quote.request_id,
        step_id,
        description,
        _transaction_item(quote, to, data, value, with_check=True, gas=gas),
    )


def _deposit_address_step(quote: Quote) -> dict[str, Any]:
    """A plain transfer (ether, or the token's `transfer`) to the request's deposit address."""
    assert quote.deposit_address is not None
    address = quote.deposit_address.address
    amount = quote.split.amount_in
    if quote.currency_in.is_native:
        item = _transaction_item(quote, address, b"", amount, with_check=True)
    else:
        transfer = calldata.erc20_transfer(address, amount)
        item = _transaction_item(quote, quote.currency_in.address, transfer, 0, with_check=True)
    step = transaction_step(
        quote.request_id,
        "deposit",
        f"Send {quote.currency_in.symbol} to your deposit address to bridge to chain "
        f"{quote.destination.id}",
        item,
    )
    step["depositAddress"] = address
    return step


def _permit_step(quote: Quote) -> dict[str, Any]:
    return {
        "id": "deposit",
        "action": "Confirm in your wallet",
        "description": (
            f"Sign to deposit {quote.currency_in.symbol} to bridge to chain "
            f"{quote.destination.id}, without a transaction"
        ),
        "kind": "signature",
        "requestId": quote.request_id,
        "depositAddress": "",
        "items": [permit_item(quote, check(quote.request_id))],
    }


def spends_allowance(quote: Quote) -> bool:
    """Whether the user's transaction pulls an ERC-20 input through an allowance to our
    contract (so an approval may be needed); a permit quote signs instead."""
    return (
        quote.permit_valid_before is None
        and quote.deposit_address is None
        and not quote.currency_in.is_native
        and (quote.kind.same_chain or quote.explicit_deposit)
    )


def allowance_suffices(quote: Quote, allowance: int | None) -> bool:
    """Whether `allowance` (None: unknown) covers the input, so no approval step is needed."""
    return allowance is not None and allowance >= quote.split.amount_in


def steps(quote: Quote, *, allowance: int | None) -> list[dict[str, Any]]:
    """`approve` only when an ERC-20 input needs more allowance than there is; with
    `usePermit`, one signature and no transaction."""
    if quote.permit_valid_before is not None:
        return [_permit_step(quote)]
    if quote.deposit_address is not None:
        return [_deposit_address_step(quote)]
    result: list[dict[str, Any]] = []
    if spends_allowance(quote) and not allowance_suffices(quote, allowance):
        approve = calldata.erc20_approve(spender(quote), quote.split.amount_in)
        result.append(
            transaction_step(
                quote.request_id,
                "approve",
                f"Sign an approval for {quote.currency_in.symbol}",
                _transaction_item(quote, quote.currency_in.address, approve, 0, with_check=False),
            )
        )
    result.append(_main_step(quote))
    return result
