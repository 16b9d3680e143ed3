"""Named types for what an int or str means. Amounts are integers in the smallest unit."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, NewType

ChainId = NewType("ChainId", int)
Address = NewType("Address", str)  # EVM: EIP-55 checksummed
SvmAddress = NewType("SvmAddress", str)  # base58 of 32 bytes, case-sensitive: never lower-cased
TxHash = NewType("TxHash", str)  # 0x-prefixed, 32 bytes hex
RequestId = NewType("RequestId", str)
OrderId = NewType("OrderId", str)  # 0x-prefixed bytes32 hex
Wei = NewType("Wei", int)

NATIVE_EVM_ADDRESS = Address("0x0000000000000000000000000000000000000000")
# The API's address of an SVM chain's native coin (SOL): thirty-two `1`s, 9 decimals.
NATIVE_SVM_ADDRESS = SvmAddress("1" * 32)
# The perps exchange's network a signed action names (`hyperliquidChain`).
ExchangeChain = Literal["Mainnet", "Testnet"]


class TraceApi(StrEnum):
    """The call traces a chain's RPC serves, from which contracts' ether payments are read
    (`kinds.evm.internal_transfers`)."""

    PARITY = "parity"  # trace_filter, trace_transaction, trace_block: Erigon, Nethermind, Reth
    GETH = "geth"  # debug_traceBlockByHash with the callTracer: geth and its forks
