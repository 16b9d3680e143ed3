"""Calldata for our contracts' entry points (pure encoding, shared by quotes and workers)."""

from __future__ import annotations

from eth_abi.abi import encode
from eth_utils.crypto import keccak


def selector(signature: str) -> bytes:
    return keccak(text=signature)[:4]


DEPOSIT_NATIVE = selector("depositNative(address,bytes32)")
DEPOSIT_ERC20 = selector("depositErc20(address,address,uint256,bytes32)")
ERC20_APPROVE = selector("approve(address,uint256)")
ERC20_TRANSFER = selector("transfer(address,uint256)")
DEPOSITORY_EXECUTE = selector("execute(((address,bytes,uint256,bool)[],uint256,uint256),bytes)")
FILLER_FILL = selector("fill(bytes32,(address,address,uint256)[],(address,bool,uint256,bytes)[])")


def hex_data(calldata: bytes) -> str:
    return "0x" + calldata.hex()


def deposit_native(depositor: str, order_id: bytes) -> bytes:
    return DEPOSIT_NATIVE + encode(["address", "bytes32"], [depositor, order_id])


def deposit_erc20(depositor: str, token: str, amount: int, order_id: bytes) -> bytes:
    return DEPOSIT_ERC20 + encode(
        ["address", "address", "uint256", "bytes32"], [depositor, token, amount, order_id]
    )


def erc20_approve(spender: str, amount: int) -> bytes:
    return ERC20_APPROVE + encode(["address", "uint256"], [spender, amount])


def erc20_transfer_tagged(to: str, amount: int, order_id: bytes) -> bytes:
    """An implicit deposit: a plain transfer whose calldata ends with the orderId."""
    return erc20_transfer(to, amount) + order_id


def filler_fill(
    order_id: bytes,
    payments: list[tuple[str, str, int]],
    calls: list[tuple[str, bool, int, bytes]] | None = None,
) -> bytes:
    """Filler.fill with the orderId appended for attribution (the ABI decoder ignores it)."""
    arguments = encode(
        ["bytes32", "(address,address,uint256)[]", "(address,bool,uint256,bytes)[]"],
        [order_id, payments, calls or []],
    )
    return FILLER_FILL + arguments + order_id


def erc20_transfer(to: str, amount: int) -> bytes:
    return ERC20_TRANSFER + encode(["address", "uint256"], [to, amount])


def depository_execute(
    calls: list[tuple[str, bytes, int, bool]], nonce: int, expiration: int, signature: bytes
) -> bytes:
    """Depository.execute(CallRequest, signature): a payout authorised by the allocator."""
    return DEPOSITORY_EXECUTE + encode(
        ["((address,bytes,uint256,bool)[],uint256,uint256)", "bytes"],
        [(calls, nonce, expiration), signature],
    )
