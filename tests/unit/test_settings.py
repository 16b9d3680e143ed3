"""Process settings that cannot work together are refused at start-up, naming the fix."""

from __future__ import annotations

import pytest

from crossfill.errors import ConfigError
from crossfill.settings import load_settings


def test_several_api_processes_are_refused_on_sqlite(tmp_path) -> None:
    with pytest.raises(ConfigError, match="PostgreSQL CROSSFILL_DATABASE_URL"):
        load_settings(home=tmp_path, api_processes=2)


def test_several_api_processes_run_on_postgresql(tmp_path) -> None:
    settings = load_settings(
        home=tmp_path,
        api_processes=3,
        database_url="postgresql+asyncpg://postgres@127.0.0.1:5432/test",
    )
    assert settings.api_processes == 3


def test_one_api_process_runs_on_sqlite(tmp_path) -> None:
    assert load_settings(home=tmp_path).api_processes == 1


def test_trusted_proxies_are_a_comma_list_of_addresses_and_networks(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROSSFILL_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8,::1")
    proxies = load_settings(home=tmp_path).trusted_proxies
    assert [str(network) for network in proxies] == ["127.0.0.1/32", "10.0.0.0/8", "::1/128"]
    monkeypatch.setenv("CROSSFILL_TRUSTED_PROXIES", "proxy.internal")
    with pytest.raises(ConfigError, match="trusted_proxies"):
        load_settings(home=tmp_path)


def test_no_proxy_is_trusted_by_default(tmp_path) -> None:
    assert load_settings(home=tmp_path).trusted_proxies == ()
