"""A new quote's random request id and order salt, from the OS's generator, read in blocks.

`os.urandom` lets go of the GIL for its system call, and under load taking it back meant
waiting for the database driver's thread: about 5% of a quote's own time. One call now
fills a block for the next 256 quotes. A process started by `fork` must not reuse its
parent's block (two processes would hand out the same ids and salts), so a child forgets it.
"""

from __future__ import annotations

import os
import threading

from crossfill.quoting.engine import Entropy

_DRAW_BYTES = 64  # 32 for the request id, 32 for the salt
_DRAWS_PER_BLOCK = 256


class EntropyPool:
    def __init__(self) -> None:
        self._block = b""
        self._used = 0
        self._lock = threading.Lock()

    def draw(self) -> Entropy:
        with self._lock:
            if self._used == len(self._block):
                self._block = os.urandom(_DRAW_BYTES * _DRAWS_PER_BLOCK)
                self._used = 0
            # This block, sliced here: another thread may replace `_block` once the lock is
            # let go, and a slice of its replacement would repeat a later draw.
            start = self._used
            self._used += _DRAW_BYTES
            drawn = self._block[start : start + _DRAW_BYTES]
        return Entropy(request_id=drawn[:32], salt=int.from_bytes(drawn[32:]))

    def forget(self) -> None:
        """Drop what is left of the block (in a forked child: it is the parent's too)."""
        self._block = b""
        self._used = 0
        self._lock = threading.Lock()


_POOL = EntropyPool()
os.register_at_fork(after_in_child=_POOL.forget)


def new_entropy() -> Entropy:
    return _POOL.draw()
