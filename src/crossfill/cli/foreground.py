"""The service run in the foreground until Ctrl-C or SIGTERM stops it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

from crossfill.settings import Mode, Settings

if TYPE_CHECKING:
    from crossfill.kinds.port import ChainKind


def exit_on_sigterm() -> None:
    """SIGTERM stops the process as Ctrl-C does, so `finally` blocks stop workers and child
    processes: inside the event loop's runner by cancelling its main task (the runner's own
    SIGINT handler), elsewhere by KeyboardInterrupt. Raised from this handler inside the
    loop, KeyboardInterrupt would land in whatever code ran at that instant (a worker's
    database call, a driver's callback) and could leave the process unable to stop."""

    def _interrupt(_signum: int, frame: FrameType | None) -> None:
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint) and on_sigint is not signal.default_int_handler:
            on_sigint(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)


def serve_until_interrupted(settings: Settings) -> None:
    """The API, the chain followers and the workers, until interrupted."""
    from crossfill.process.server import serve

    until_interrupted(serve(settings, kinds=served_kinds(settings)))


def served_kinds(settings: Settings) -> Sequence[ChainKind]:
    """The kinds of chain served; in devnet mode only, the devnet's own (their keys resolve
    its key references: the devnet's deployment file, served by `crossfill devnet` or by
    `crossfill run` beside `crossfill devnet --chains-only`). Production never loads them."""
    from crossfill.kinds.registry import KINDS

    if settings.mode is not Mode.DEVNET:
        return KINDS
    from crossfill.devnet.kinds import devnet_kinds

    return devnet_kinds()


def until_interrupted(service: Coroutine[Any, Any, None]) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        _event_loop_runner()(service)


def _event_loop_runner() -> Callable[[Coroutine[Any, Any, None]], None]:
    """uvloop where it is installed (its loop cuts the per-request cost of the API and the
    RPC clients), the standard loop otherwise."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run
    return uvloop.run
