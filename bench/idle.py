"""CPU of an idle service: the devnet service with no requests, its process alone.

Run: `.venv/bin/python -m bench.idle [--seconds 30] [--settle 10]`. The service's own process
(workers and API on one event loop; not its chains, SVM node or exchange) is read from
/proc before and after the window; the answer is the share of one core it used, and its read
and write system calls per second (/proc/PID/io: queries, RPC calls), which a loaded machine
does not inflate.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from bench.common import devnet_service


def process_cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_syscalls(pid: int) -> int:
    """Read and write system calls so far (`syscr` + `syscw`)."""
    counts = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(counts["syscr"]) + int(counts["syscw"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--settle", type=float, default=10)
    args = parser.parse_args()
    with devnet_service() as service:
        time.sleep(args.settle)
        start_cpu, start = process_cpu_seconds(service.pid), time.monotonic()
        start_calls = process_syscalls(service.pid)
        time.sleep(args.seconds)
        used = process_cpu_seconds(service.pid) - start_cpu
        calls = process_syscalls(service.pid) - start_calls
        elapsed = time.monotonic() - start
    print(
        f"idle service: {used / elapsed:.1%} of a core over {elapsed:.0f} s, "
        f"{calls / elapsed:.0f} read/write syscalls/s"
    )


if __name__ == "__main__":
    main()
