"""`crossfill requests` run as an operator runs it, over a database holding requests: the
listing's filters and pages, one request's timeline, and mistakes answered as usage errors."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from crossfill.cli.database import migrated_session
from crossfill.quoting.response import quote_wire
from tests.support import quote_fixtures as fx
from tests.support.service import run_cli, service_settings
from tests.support.synthetic import SyntheticSet, insert_synthetic, synthetic_requests
from tests.unit.deployment_samples import as_toml, deployment_document

QUOTE = quote_wire(fx.quote(fx.body()), allowance=None, user_balance=None)
DATA = synthetic_requests(12, quote=QUOTE)


async def _seed(home: Path, deployment_path: Path, data: SyntheticSet) -> None:
    async with migrated_session(service_settings(home, deployment_path)) as session:
        await insert_synthetic(await session.connection(), data)
        await session.commit()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    deployment_path = tmp_path / "deployment.toml"
    deployment_path.write_text(as_toml(deployment_document()))
    asyncio.run(_seed(tmp_path, deployment_path, DATA))
    return tmp_path


def _crossfill(home: Path, *args: str) -> tuple[int, str, str]:
    wide = {**os.environ, "COLUMNS": "300"}  # whole ids and hashes on one line
    result = run_cli(
        "requests", *args, environment=wide, home=home, deployment_file=home / "deployment.toml"
    )
    return result.returncode, result.stdout, result.stderr


def test_the_listing_filters_by_status_and_pages_on(home: Path) -> None:
    status = DATA.requests[0]["status"]
    matching = [row["id"] for row in DATA.requests if row["status"] == status]
    code, out, err = _crossfill(home, "list", "--status", status, "--limit", "50")
    assert code == 0, err
    assert all(request_id in out for request_id in matching)
    assert not any(row["id"] in out for row in DATA.requests if row["status"] != status)

    code, first, err = _crossfill(home, "list", "--limit", "1")
    assert code == 0, err
    continuation = first.split("continuation: ")[1].split()[0]
    code, second, err = _crossfill(home, "list", "--limit", "1", "--continuation", continuation)
    assert code == 0, err
    shown = [row["id"] for row in DATA.requests if row["id"] in first + second]
    assert len(shown) == 2


def test_a_request_shows_its_timeline_and_status(home: Path) -> None:
    row = next(row for row in DATA.requests if row["status"] in ("success", "refund"))
    code, out, err = _crossfill(home, "show", row["id"])
    assert code == 0, err
    assert f"request {row['id']}: {row['status']}" in out
    assert "quoted" in out and "deposit confirmed" in out
    assert ("fill" if row["status"] == "success" else "refund") in out


@pytest.mark.parametrize(
    "args",
    [
        ("list", "--status", "finished"),
        ("list", "--chain", "one"),
        ("list", "--limit", "500"),
        ("list", "--id", "0x12"),
        ("show", "0x12"),
    ],
)
def test_bad_filters_are_usage_errors(home: Path, args: tuple[str, ...]) -> None:
    code, _, err = _crossfill(home, *args)
    assert code == 2
    assert "Invalid value" in err


def test_an_unknown_request_is_a_clear_error(home: Path) -> None:
    code, out, _ = _crossfill(home, "show", "0x" + "ab" * 32)
    assert code == 1
    assert f"no request 0x{'ab' * 32}" in out
