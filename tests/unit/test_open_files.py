"""The service raises its soft limit on open files to the hard limit at start (a soft 1,024
would let a thousand held connections shut out every other client and the chains)."""

from __future__ import annotations

import resource
import subprocess
import sys

PROBE = """
import resource
from crossfill.process.open_files import raise_open_files_limit
now = raise_open_files_limit()
print(now, *resource.getrlimit(resource.RLIMIT_NOFILE))
"""


def _lowered_to(soft: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_soft_limit_is_raised_to_the_hard_one() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard > 256, "this machine's hard limit leaves nothing to raise"
    probe = subprocess.run(
        [sys.executable, "-c", PROBE],
        preexec_fn=lambda: _lowered_to(256),
        capture_output=True,
        text=True,
        check=True,
    )
    last_line = probe.stdout.strip().splitlines()[-1]  # after the log line saying so
    reported, soft, hard_after = (int(field) for field in last_line.split())
    assert reported == soft == hard_after == hard
