"""The bridge port: what a rebalancer asks of any way to move the solver's inventory from one
chain to another, and every answer as a typed value (never an exception for a refusal or an
outage).

A move goes through three calls:

- `quote(move)`: a `BridgeQuote` (what will arrive, the transactions the solver sends on the
  origin chain), `Refused` (the bridge said no: final for this move, with its reason), or
  `Unavailable` (the bridge or a chain could not answer, after the retries: ask again later);
- `send(quote)`: each transaction signed by the solver's key and journalled before it is
  broadcast, so calling it again (after a crash, a timeout) never sends a second one: a
  `SentMove`, `Refused` (the origin chain's contract reverted a transaction), or `Unavailable`;
- `status(sent)`: `Arrived`, `Pending`, `Refunded` or `Failed`.

The caller keeps the `BridgeQuote` (or its `request_id`) until the move has ended: `send` of
the same quote is what resumes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class Move:
    """`amount` (smallest units) of `currency_in` on the origin chain, to arrive as
    `currency_out` on the destination, both the solver's own address."""

    origin_chain_id: int
    destination_chain_id: int
    currency_in: str
    currency_out: str
    amount: int

    def __post_init__(self) -> None:
        if self.amount <= 0:
            raise ValueError("a move's amount must be positive")
        if self.origin_chain_id == self.destination_chain_id:
            raise ValueError("a move goes from one chain to another")


@dataclass(frozen=True)
class BridgeCall:
    """One transaction the solver sends on the origin chain (an approval, the deposit)."""

    to: str
    data: bytes
    value: int
    # The gas the bridge says it takes; None: estimated on the chain when sent.
    gas: int | None = None


@dataclass(frozen=True)
class BridgeQuote:
    """The bridge's offer for a move: `request_id` is the bridge's name for it (what `status`
    follows, and what makes `send` idempotent), `amount_out` what arrives on the destination."""

    move: Move
    request_id: str
    amount_out: int
    calls: tuple[BridgeCall, ...]

    def document(self) -> dict[str, Any]:
        """The quote as JSON-ready values (calldata in hex), to be kept until the move ends."""
        return {
            "move": asdict(self.move),
            "request_id": self.request_id,
            "amount_out": str(self.amount_out),
            "calls": [
                {"to": c.to, "data": "0x" + c.data.hex(), "value": str(c.value), "gas": c.gas}
                for c in self.calls
            ],
        }

    @classmethod
    def of_document(cls, document: Mapping[str, Any]) -> BridgeQuote:
        """The quote `document` holds (as `document()` wrote it)."""
        calls = tuple(
            BridgeCall(
                call["to"],
                bytes.fromhex(str(call["data"]).removeprefix("0x")),
                int(call["value"]),
                None if call["gas"] is None else int(call["gas"]),
            )
            for call in document["calls"]
        )
        return cls(
            Move(**document["move"]),
            str(document["request_id"]),
            int(document["amount_out"]),
            calls,
        )


@dataclass(frozen=True)
class Refused:
    """Final for this move (or this quote): `by` the bridge (its `code`, e.g.
    `INSUFFICIENT_LIQUIDITY`, and message), or by the origin chain (a transaction reverted)."""

    by: Literal["bridge", "chain"]
    reason: str
    code: str | None = None


@dataclass(frozen=True)
class Unavailable:
    """Nothing decided: the bridge answered 5xx or 429, or it or a chain could not be reached,
    on every try; or the signing key is another process's now. Ask again later."""

    reason: str


@dataclass(frozen=True)
class SentMove:
    """A quote's transactions, all journalled and the last broadcast (`tx_hashes` in order)."""

    quote: BridgeQuote
    tx_hashes: tuple[str, ...]


@dataclass(frozen=True)
class Arrived:
    """The bridge filled the move: `amount` of the move's `currency_out` paid to the solver on
    the destination (`tx_hashes`: the bridge's fill)."""

    amount: int
    tx_hashes: tuple[str, ...]


@dataclass(frozen=True)
class Pending:
    """Not ended: `stage` says where (`origin` while a transaction of ours is unmined,
    `bridge` while the bridge has not filled it, `unknown` while the bridge cannot be asked)."""

    stage: Literal["origin", "bridge", "unknown"]
    detail: str


@dataclass(frozen=True)
class Refunded:
    """The bridge gave up and paid the deposit back on the origin chain (`tx_hashes`)."""

    tx_hashes: tuple[str, ...]


@dataclass(frozen=True)
class Failed:
    """The move did not happen: a transaction of ours reverted, or the bridge marked its
    request failed (it refunds a deposit it holds: a later `status` may say `Refunded`)."""

    reason: str


QuoteOutcome = BridgeQuote | Refused | Unavailable
SendOutcome = SentMove | Refused | Unavailable
MoveStatus = Arrived | Pending | Refunded | Failed


class InventoryBridge(Protocol):
    """A way to move the solver's inventory between chains."""

    async def quote(self, move: Move) -> QuoteOutcome: ...

    async def send(self, quote: BridgeQuote) -> SendOutcome: ...

    async def status(self, sent: SentMove) -> MoveStatus: ...
