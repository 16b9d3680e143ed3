"""Drive a closed-loop load with `wrk` (C, one thread by default: it takes far less of the
shared cores than a Python generator) posting a list of bodies in turn, and read its figures
back from a Lua `done` hook."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

_SCRIPT = """
local bodies = {%(bodies)s}
local next_body = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

request = function()
  next_body = next_body %% #bodies + 1
  return wrk.format(nil, "%(path)s", nil, bodies[next_body])
end

done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    "WRK-RESULT {\\"requests\\": %%d, \\"duration_us\\": %%d, \\"p50_us\\": %%d, " ..
    "\\"p99_us\\": %%d, \\"non_2xx\\": %%d, \\"socket_errors\\": %%d}\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.status, errors.connect + errors.read + errors.write + errors.timeout))
end
"""


@dataclass(frozen=True)
class WrkResult:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    failed: int  # non-2xx answers and socket errors

    @property
    def per_second(self) -> float:
        return self.requests / self.seconds


def _lua_string(text: str) -> str:
    level = "="
    while f"]{level}]" in text:
        level += "="
    return f"[{level}[{text}]{level}]"


def run_wrk(
    base_url: str,
    path: str,
    bodies: list[bytes],
    *,
    connections: int,
    seconds: float,
    threads: int = 1,
) -> WrkResult:
    """`connections` connections in a closed loop for `seconds`, body i+1 after body i."""
    wrk = shutil.which("wrk")
    if wrk is None:
        raise SystemExit("wrk is not installed: `make bench-tools` installs it (Debian: wrk)")
    script = _SCRIPT % {
        "bodies": ", ".join(_lua_string(body.decode()) for body in bodies),
        "path": path,
    }
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write(script)
    try:
        finished = subprocess.run(
            [
                wrk,
                f"-t{threads}",
                f"-c{connections}",
                f"-d{seconds:g}s",
                "--timeout",
                "30s",
                "-s",
                lua.name,
                base_url,
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        Path(lua.name).unlink()
    line = next(
        (line for line in finished.stdout.splitlines() if line.startswith("WRK-RESULT ")), None
    )
    if line is None:
        raise SystemExit(f"wrk printed no result:\n{finished.stdout}\n{finished.stderr}")
    figures = json.loads(line.removeprefix("WRK-RESULT "))
    return WrkResult(
        requests=figures["requests"],
        seconds=figures["duration_us"] / 1e6,
        p50_ms=figures["p50_us"] / 1000,
        p99_ms=figures["p99_us"] / 1000,
        failed=figures["non_2xx"] + figures["socket_errors"],
    )
