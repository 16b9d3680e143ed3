"""Devnet child processes (anvil chains, the SVM node, the exchange): started on a free
loopback port, waited on until they answer, tied to the devnet's life, stopped for sure."""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx

from crossfill.errors import DevnetError

_PR_SET_PDEATHSIG = 1
_START_ATTEMPTS = 5
# Children listen on the loopback interface only, and have this long to answer once started.
LOOPBACK = "127.0.0.1"
READY_TIMEOUT_SECONDS = 20.0
# Linux's range of local ports for outgoing connections; how many ports a probe tries.
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_PORT_TRIES = 200


def die_with_parent() -> None:
    """Runs in the child before exec: it gets SIGTERM if the devnet process dies (Linux)."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port(host: str = LOOPBACK) -> int:
    """A port nothing listens on, below the kernel's ephemeral range: outgoing connections
    take their local ports from that range, so a port from it could be taken between this
    probe and the child's bind by any client, or by the readiness check itself (a TCP
    connection to a loopback port not yet listened on can connect to itself)."""
    low, high = _LISTEN_PORTS
    for _ in range(_PORT_TRIES):
        port = low + secrets.randbelow(high - low)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    raise DevnetError(f"no free port on {host} in {low}-{high - 1}")


def _listen_ports() -> tuple[int, int]:
    """Where children listen: up to the start of the ephemeral range (Linux's setting, 32768
    when it cannot be read), from 10000."""
    try:
        first_ephemeral = int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first_ephemeral = 32768
    return (10000, max(first_ephemeral, 10000 + _PORT_TRIES))


_LISTEN_PORTS = _listen_ports()


@dataclass(kw_only=True)
class ChildProcess:
    host: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def rpc_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, grace_seconds: float = 5.0) -> None:
        """SIGTERM, then SIGKILL if it does not exit within the grace period."""
        if not self.alive():
            return
        self.process.terminate()
        try:
            self.process.wait(grace_seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def spawn(
    command: Sequence[str], log_path: Path, *, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """The command with its output appended to `log_path`, dying with this process; in `env`
    (default: this process's environment).

    In a process group of its own: a Ctrl-C at the terminal reaches the devnet process alone,
    which stops the service first (its workers still reaching the chains) and then its
    children, instead of the chains vanishing under the running workers."""
    posix = os.name == "posix"
    with log_path.open("ab") as log:
        return subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=None if env is None else dict(env),
            preexec_fn=die_with_parent if posix else None,
            process_group=0 if posix else None,
        )


Child = TypeVar("Child", bound=ChildProcess)


def answers_post(url: str, body: dict[str, object]) -> bool:
    """Whether a child answers `body` POSTed to `url` with a 200 within a second (its
    readiness probe)."""
    try:
        reply = httpx.post(url, json=body, timeout=1)
    except httpx.HTTPError:
        return False
    return reply.status_code == 200


def start_child(
    launch: Callable[[int], Child],
    answers: Callable[[Child], bool],
    *,
    what: str,
    log_path: Path,
) -> Child:
    """Launch on a free loopback port (its output to `log_path`) until one start answers
    within `READY_TIMEOUT_SECONDS`: a child that exits early most likely lost its port to
    another process between probe and bind."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(_START_ATTEMPTS):
        child = launch(free_port(LOOPBACK))
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while child.alive() and time.monotonic() < deadline:
            if answers(child):
                return child
            time.sleep(0.05)
        child.stop()
    raise DevnetError(f"{what} did not start; see {log_path}")
