"""The import contract that keeps the benchmarks off the suites (`pyproject.toml`, checked by
`lint-imports`) names every module of `tests` but `tests.support`: a suite added later is
covered too."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]
CONTRACT = "the benchmarks share only tests.support, which imports no suite"


def _forbidden_suites() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["name"] == CONTRACT]
    assert set(contract["source_modules"]) == {"bench", "tests.support"}
    return set(contract["forbidden_modules"])


def _suites() -> set[str]:
    tests = ROOT / "tests"
    modules = {f"tests.{path.stem}" for path in tests.glob("*.py") if path.stem != "__init__"}
    packages = {f"tests.{path.parent.name}" for path in tests.glob("*/__init__.py")}
    return (modules | packages) - {"tests.support"}


def test_the_contract_names_every_module_of_tests_but_support() -> None:
    assert _forbidden_suites() == _suites()
