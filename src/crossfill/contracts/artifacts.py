"""Load compiled contract artifacts (ABI + creation bytecode) produced by `build.py`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from crossfill.contracts.toolchain import ARTIFACTS_DIR
from crossfill.errors import ToolchainMissing


@dataclass(frozen=True)
class Artifact:
    name: str
    abi: list[dict[str, Any]]
    bytecode: str


@cache
def load_artifact(name: str) -> Artifact:
    path = ARTIFACTS_DIR / f"{name}.json"
    if not path.exists():
        raise ToolchainMissing(f"artifact {name} missing: run `make contracts` to compile them")
    compiled = json.loads(path.read_text())
    return Artifact(name=name, abi=compiled["abi"], bytecode=compiled["bytecode"])
