"""Function selectors, argument types and event topics taken from the compiled ABIs.

Nothing here is typed by hand: a function is named by its contract and name (and, when the
name is overloaded, its argument count), and its selector and argument types come from the
artifact `make contracts` built. ERC-20 calls use the test token's ABI (the standard
interface), price feeds the test feed's (AggregatorV3's `latestRoundData`/`decimals`).
Everything is looked up on first use, so importing this module needs no artifacts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, cast

from eth_abi.abi import decode
from eth_typing import ABIEvent, ABIFunction
from eth_utils.abi import (
    collapse_if_tuple,
    event_abi_to_log_topic,
    function_abi_to_4byte_selector,
    get_abi_input_types,
    get_abi_output_types,
)

from crossfill.contracts.abi_encoders import ENCODERS, ShapeCheckedTupleEncoder
from crossfill.contracts.artifacts import load_artifact

ERC20 = "TestUSDC"
PRICE_FEED = "TestPriceFeed"
V2_PAIR = "UniswapV2Pair"
V2_ROUTER = "UniswapV2Router02"


@dataclass(frozen=True)
class AbiFunction:
    name: str
    selector: bytes
    input_types: tuple[str, ...]
    output_types: tuple[str, ...]

    @cached_property
    def _encoder(self) -> ShapeCheckedTupleEncoder:
        """The arguments' encoder, built once (`eth_abi.encode` builds one on every call)."""
        encoders = [ENCODERS.get_encoder(kind) for kind in self.input_types]
        return ShapeCheckedTupleEncoder(encoders=encoders)  # type: ignore[no-untyped-call]

    def encode(self, *arguments: Any) -> bytes:
        """Calldata: the selector and the ABI-encoded arguments."""
        return self.selector + self._encoder(arguments)

    def decode_output(self, returned: bytes) -> tuple[Any, ...]:
        return tuple(decode(list(self.output_types), returned))

    def decode_arguments(self, encoded: bytes) -> tuple[Any, ...]:
        """The arguments of calldata without its selector."""
        return tuple(decode(list(self.input_types), encoded))


@dataclass(frozen=True)
class AbiEvent:
    name: str
    topic: str
    """topic0 as 0x-prefixed lowercase hex, as JSON-RPC logs carry it."""
    indexed: tuple[tuple[str, str], ...]
    """(name, ABI type) of the indexed arguments, in topic order."""
    data: tuple[tuple[str, str], ...]
    """(name, ABI type) of the other arguments, in the order the log's data holds them."""

    @property
    def data_types(self) -> tuple[str, ...]:
        return tuple(kind for _, kind in self.data)

    def decode_data(self, data: bytes) -> tuple[Any, ...]:
        return tuple(decode(list(self.data_types), data))


def _entries(contract: str, kind: str, name: str) -> list[dict[str, Any]]:
    return [
        entry
        for entry in load_artifact(contract).abi
        if entry["type"] == kind and entry.get("name") == name
    ]


@cache
def function(contract: str, name: str, arguments: int | None = None) -> AbiFunction:
    """`contract`'s function `name`; `arguments` picks among overloads by argument count."""
    entries = [
        entry
        for entry in _entries(contract, "function", name)
        if arguments is None or len(entry["inputs"]) == arguments
    ]
    if len(entries) != 1:
        raise LookupError(f"{contract}.{name}: {len(entries)} ABI functions match")
    entry = cast(ABIFunction, entries[0])
    return AbiFunction(
        name=name,
        selector=function_abi_to_4byte_selector(entry),
        input_types=tuple(get_abi_input_types(entry)),
        output_types=tuple(get_abi_output_types(entry)),
    )


@cache
def event(contract: str, name: str) -> AbiEvent:
    entries = _entries(contract, "event", name)
    if len(entries) != 1:
        raise LookupError(f"{contract}.{name}: {len(entries)} ABI events match")
    entry = cast(ABIEvent, entries[0])
    inputs = [
        (item["name"], collapse_if_tuple(item), item.get("indexed")) for item in entry["inputs"]
    ]
    return AbiEvent(
        name=name,
        topic="0x" + event_abi_to_log_topic(entry).hex(),
        indexed=tuple((name, kind) for name, kind, indexed in inputs if indexed),
        data=tuple((name, kind) for name, kind, indexed in inputs if not indexed),
    )
