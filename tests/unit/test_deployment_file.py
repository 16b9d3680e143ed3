"""Deployment file validation: good files load; bad ones fail naming the field."""

from __future__ import annotations

import pytest

from crossfill.config import parse_deployment
from crossfill.config.loader import load_deployment
from crossfill.errors import ConfigError
from crossfill.settings import Mode
from crossfill.types import TraceApi
from tests.unit.deployment_samples import as_toml, deployment_document


def _parse(document, mode: Mode = Mode.DEVNET):
    return parse_deployment(as_toml(document), source="deployment.toml", mode=mode)


def _error(document, mode: Mode = Mode.DEVNET) -> str:
    with pytest.raises(ConfigError) as raised:
        _parse(document, mode)
    return str(raised.value)


def test_valid_file_loads_with_checksummed_addresses_and_defaults() -> None:
    document = deployment_document()
    document["chains"][0]["contracts"]["depository"] = "0x5fbdb2315678afecb367f032d93f642f64180aa3"
    deployment = _parse(document)
    chain = deployment.chains[0]
    assert chain.contracts.depository == "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    assert chain.vm_type == "evm"
    assert chain.rpc_url == "http://127.0.0.1:8545"
    assert chain.protocol_name == "crossfill-devnet-1"
    assert [tier.blocks for tier in chain.confirmations] == [2, 4, 32]
    assert deployment.chain(900002) is deployment.chains[1]


def test_bad_address_names_chain_and_field() -> None:
    document = deployment_document()
    document["chains"][1]["contracts"]["filler"] = "0x1234"
    message = _error(document)
    assert "chains[1](crossfill-devnet-2).contracts.filler" in message
    assert "20-byte hex address" in message


def test_missing_field_is_named() -> None:
    document = deployment_document()
    del document["chains"][0]["http_rpc_url"]
    assert "chains[0](crossfill-devnet-1).http_rpc_url: Field required" in _error(document)


def test_unknown_field_is_rejected_by_name() -> None:
    document = deployment_document()
    document["chains"][0]["rpc"] = "http://typo"
    assert "chains[0](crossfill-devnet-1).rpc: Extra inputs are not permitted" in _error(document)


def test_duplicate_chain_ids_are_rejected() -> None:
    document = deployment_document()
    document["chains"][1]["id"] = 900001
    assert "duplicate id 900001" in _error(document)


def test_private_key_in_the_file_is_refused() -> None:
    document = deployment_document()
    document["solver"]["key"] = "0x" + "11" * 32
    message = _error(document)
    assert "solver.key" in message
    assert "11" * 32 not in message


def test_devnet_keys_are_refused_in_production() -> None:
    assert "allocator.key: devnet keys are refused" in _error(
        deployment_document(), Mode.PRODUCTION
    )


@pytest.mark.parametrize(
    ("tiers", "reason"),
    [
        ([], "at least one tier"),
        (
            [{"max_usd": 1000, "blocks": 2}, {"max_usd": 100, "blocks": 4}, {"blocks": 8}],
            "increasing",
        ),
        ([{"max_usd": 100, "blocks": 2}], "last tier must leave max_usd unset"),
        ([{"blocks": 0}], "greater than or equal to 1"),
    ],
)
def test_confirmation_policy_is_validated(tiers, reason) -> None:
    document = deployment_document()
    document["chains"][0]["confirmations"] = tiers
    message = _error(document)
    assert "chains[0](crossfill-devnet-1).confirmations" in message
    assert reason in message


def test_native_currency_must_be_the_zero_address() -> None:
    document = deployment_document()
    document["chains"][0]["native_currency"]["address"] = (
        "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    )
    assert "chains[0](crossfill-devnet-1).native_currency" in _error(document)


def test_rpc_url_must_be_http() -> None:
    document = deployment_document()
    document["chains"][0]["http_rpc_url"] = "localhost:8545"
    assert "http_rpc_url: Value error, must be an http:// or https:// URL" in _error(document)


def test_invalid_toml_is_reported_with_the_file_name() -> None:
    with pytest.raises(ConfigError, match=r"deployment.toml: not valid TOML"):
        parse_deployment("chains = [", source="deployment.toml", mode=Mode.DEVNET)


def test_missing_file_says_how_to_create_one(tmp_path) -> None:
    with pytest.raises(ConfigError, match="make run"):
        load_deployment(tmp_path / "absent.toml", mode=Mode.DEVNET)


@pytest.mark.parametrize(
    ("written", "read"),
    [(True, TraceApi.PARITY), ("parity", TraceApi.PARITY), ("geth", TraceApi.GETH), (False, None)],
)
def test_the_traces_a_chain_serves_are_named_or_true_as_before(written, read) -> None:
    document = deployment_document()
    document["chains"][0]["trace_internal_transfers"] = written
    assert _parse(document).chains[0].trace_internal_transfers is read
    assert _parse(deployment_document()).chains[0].trace_internal_transfers is None


def test_an_unknown_kind_of_traces_is_refused_by_name() -> None:
    document = deployment_document()
    document["chains"][0]["trace_internal_transfers"] = "erigon"
    message = _error(document)
    assert "chains[0](crossfill-devnet-1).trace_internal_transfers" in message
    assert "'parity' or 'geth'" in message


def test_the_rebalancing_bridge_is_off_unless_named_with_its_defaults() -> None:
    assert _parse(deployment_document()).rebalancing.bridge_url is None
    document = {**deployment_document(), "rebalancing": {"bridge_url": "https://bridge.example"}}
    rebalancing = _parse(document).rebalancing
    assert rebalancing.bridge_url == "https://bridge.example"
    assert (rebalancing.bridge_attempts, rebalancing.bridge_timeout_seconds) == (4, 10)


@pytest.mark.parametrize(
    ("section", "reason"),
    [
        ({"bridge_url": "ftp://bridge.example"}, "rebalancing.bridge_url"),
        ({"bridge_attempts": 0}, "rebalancing.bridge_attempts"),
        ({"bridge_backoff_seconds": 5, "bridge_backoff_max_seconds": 1}, "at least"),
        ({"bridge": "http://typo"}, "rebalancing.bridge: Extra inputs are not permitted"),
    ],
)
def test_bad_rebalancing_settings_are_named(section, reason) -> None:
    assert reason in _error({**deployment_document(), "rebalancing": section})


NATIVE = "0x0000000000000000000000000000000000000000"


def _target(**overrides: object) -> dict[str, object]:
    return {
        "chain_id": 900002, "currency": NATIVE, "minimum": "5", "target": "20", "maximum": "50",
        **overrides,
    }  # fmt: skip


def test_rebalancing_targets_load_and_run_unless_turned_off() -> None:
    assert not _parse(deployment_document()).rebalancing.runs
    document = {**deployment_document(), "rebalancing": {"targets": [_target()]}}
    rebalancing = _parse(document).rebalancing
    assert rebalancing.runs and rebalancing.interval_seconds == 5
    target = rebalancing.targets[0]
    assert (target.chain_id, str(target.minimum), str(target.target)) == (900002, "5", "20")
    document["rebalancing"] = {"enabled": False, "interval_seconds": 1, "targets": [_target()]}
    assert not _parse(document).rebalancing.runs


@pytest.mark.parametrize(
    ("targets", "reason"),
    [
        ([_target(minimum="30")], "minimum ≤ target ≤ maximum"),
        ([_target(maximum="10")], "minimum ≤ target ≤ maximum"),
        ([_target(minimum="-1")], "rebalancing.targets[0].minimum"),
        ([_target(chain_id=1)], "rebalancing.targets[0]: chain 1 is no EVM chain"),
        (
            [_target(currency="0x5FbDB2315678afecb367f032d93F642f64180aa3")],
            "is not listed on chain 900002",
        ),
        ([_target(), _target(target="30")], "more than one target for chain 900002"),
        ([_target(currency="0x12")], "rebalancing.targets[0].currency"),
        ([_target(minimum="five")], "rebalancing.targets[0].minimum"),
    ],
)
def test_bad_rebalancing_targets_are_named(targets, reason) -> None:
    assert reason in _error({**deployment_document(), "rebalancing": {"targets": targets}})
