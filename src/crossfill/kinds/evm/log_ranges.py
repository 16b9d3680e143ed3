"""How many blocks a log query covers, on nodes that cap it.

Providers cap the blocks (or the results) one `eth_getLogs` may cover, and answer a wider
query with an error (`LogsRefused`). A scan (`EvmClient.scan`) asks for its whole range first;
each refusal halves the range that was refused, down to one block (refused too: not a matter
of range, so the caller's failure), and the rest of that scan goes at the narrowed width.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LogRange:
    span: int  # the blocks the next query covers

    def end(self, start: int, last: int) -> int:
        """The last block of the next query from `start`, `last` at most."""
        return min(last, start + self.span - 1)

    def narrowed(self, start: int, end: int) -> bool:
        """After [start, end] was refused: halve it; False when it was one block."""
        if end <= start:
            return False
        self.span = (end - start + 1) // 2
        return True
