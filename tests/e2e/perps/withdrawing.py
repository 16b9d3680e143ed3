"""The exchange in a deployment file for the CLI, and an exchange account funded by the CLI.
(A wallet's signatures of a withdrawal: `tests.support.wallets.perps`.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

from crossfill.devnet.deployment_file import write_deployment
from crossfill.devnet.exchange.deployment import perps_document
from crossfill.devnet.exchange.process import ExchangeProcess
from tests.conftest import RunningDevnet
from tests.support.service import run_cli


def deployment_file(devnet: RunningDevnet, exchange: ExchangeProcess, home: Path) -> Path:
    """The session devnet's deployment file plus the exchange's `[perps]`, for the CLI."""
    document = tomllib.loads(devnet.deployment_path.read_text())
    document["perps"] = perps_document(api_url=exchange.api_url)
    path = home / "deployment.toml"
    write_deployment(path, document)
    return path


def fund_on_exchange(deployment_path: Path, home: Path, user: str, **funds: str) -> None:
    """`crossfill devnet fund-exchange --usd AMOUNT` (or `--token NAME --amount AMOUNT`), as an
    operator runs it."""
    options = [part for name, value in funds.items() for part in (f"--{name}", value)]
    run = run_cli(
        "devnet", "fund-exchange", "--user", user, *options, home=home,
        deployment_file=deployment_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
