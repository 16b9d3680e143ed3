"""How many blocks a log query covers, on nodes that cap it.

Providers cap the blocks (or the results) one `eth_getLogs` may cover, and answer a wider
query with an error (`LogsRefused`). Whoever scans a range asks `widest` blocks at a time;
each refusal halves the range that was refused, down to one block (refused too: not a
matter of range, so the caller's failure); a scan that reached its goal starts wide again.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LogRange:
    widest: int
    span: int = field(init=False)

    def __post_init__(self) -> None:
        self.span = self.widest

    def end(self, start: int, last: int) -> int:
        """The last block of the next query from `start`, `last` at most."""
        return min(last, start + self.span - 1)

    def start(self, end: int, first: int) -> int:
        """The first block of the next query back from `end`, `first` at least."""
        return max(first, end - self.span + 1)

    def narrowed(self, start: int, end: int) -> bool:
        """After [start, end] was refused: halve it; False when it was one block."""
        if end <= start:
            return False
        self.span = (end - start + 1) // 2
        return True

    def reached(self) -> None:
        """The scan reached its goal: the next one starts wide again."""
        self.span = self.widest
