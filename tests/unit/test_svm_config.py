"""The `[[svm_chains]]` deployment models and SVM key references."""

from __future__ import annotations

import json
from typing import Any

import base58
import pytest
from solders.keypair import Keypair

from crossfill.config import parse_deployment
from crossfill.devnet.svm import accounts
from crossfill.errors import ConfigError, SecretError
from crossfill.kinds.evm.config import EVM_SECTION, evm_chain, evm_chains
from crossfill.kinds.registry import SECTIONS
from crossfill.kinds.svm.config import (
    SVM_CHAIN_ID,
    SVM_SECTION,
    SvmChainConfig,
    SvmKeyHolder,
    svm_chains,
)
from crossfill.kinds.svm.keys import resolve_svm_holder, resolve_svm_keypair
from crossfill.settings import Mode
from tests.unit.deployment_samples import as_toml, deployment_document

USDC_MINT = "EPjFWdd5AufqSSqeM2qACdYv6nQXBZkkk4Ht7dAJ2B8Q"
VAULT = str(accounts.solver().pubkey())


def _svm_chain(**changes: Any) -> dict[str, Any]:
    chain: dict[str, Any] = {
        "name": "svm",
        "display_name": "SVM",
        "http_rpc_url": "http://127.0.0.1:8899",
        "solver": {"address": VAULT, "key": "devnet-svm:solver"},
        "native_currency": {"address": "1" * 32, "symbol": "SOL", "name": "Solana", "decimals": 9},
        "token_currencies": [
            {"address": USDC_MINT, "symbol": "USDC", "name": "USD Coin", "decimals": 6}
        ],
    }
    chain.update(changes)
    return chain


def _parse(*svm_chains: dict[str, Any]) -> Any:
    document = deployment_document()
    document["svm_chains"] = list(svm_chains)
    return parse_deployment(as_toml(document), source="test", mode=Mode.DEVNET, sections=SECTIONS)


def test_an_svm_chain_keeps_its_base58_addresses_exactly() -> None:
    deployment = _parse(_svm_chain())
    (chain,) = svm_chains(deployment)
    assert chain.id == SVM_CHAIN_ID and chain.vm_type == "svm"
    assert chain.currency(USDC_MINT) is not None
    assert chain.currency(USDC_MINT.lower()) is None  # case-sensitive
    assert chain.solver.address == VAULT
    assert evm_chain(deployment, SVM_CHAIN_ID) is None  # the EVM paths never see it


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"solver": {"address": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
                     "key": "devnet-svm:solver"}}, "base58 SVM address"),
        ({"native_currency": {"address": "1" * 32, "symbol": "SOL", "name": "S", "decimals": 18}},
         "9 decimals"),
        ({"native_currency": {"address": USDC_MINT, "symbol": "S", "name": "S", "decimals": 9}},
         "native currency"),
        ({"token_currencies": [{"address": "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
                                "symbol": "U", "name": "U", "decimals": 6}]}, "base58"),
        ({"solver": {"address": VAULT, "key": base58.b58encode(bytes(Keypair())).decode()}},
         "private keys never go in the deployment file"),
        ({"id": 900001}, "duplicate id"),
    ],
)  # fmt: skip
def test_bad_svm_chains_are_refused_naming_the_problem(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        _parse(_svm_chain(**changes))


def test_svm_keys_come_from_the_environment_or_a_keypair_file(tmp_path: Any) -> None:
    keypair = Keypair()
    as_base58 = base58.b58encode(bytes(keypair)).decode()
    from_env = resolve_svm_keypair("env:K", mode=Mode.PRODUCTION, environ={"K": as_base58})
    assert from_env.pubkey() == keypair.pubkey()
    path = tmp_path / "id.json"
    path.write_text(json.dumps(list(bytes(keypair))))
    assert resolve_svm_keypair(f"keypair:{path}", mode=Mode.PRODUCTION).pubkey() == keypair.pubkey()
    with pytest.raises(SecretError, match="not set"):
        resolve_svm_keypair("env:MISSING", mode=Mode.PRODUCTION, environ={})
    with pytest.raises(SecretError, match="valid SVM secret key") as bad:
        resolve_svm_keypair("env:K", mode=Mode.PRODUCTION, environ={"K": as_base58[:-3]})
    assert as_base58[:-3] not in str(bad.value)


def test_devnet_svm_keys_are_refused_in_production_and_checked_against_the_address() -> None:
    with pytest.raises(SecretError, match="refused in production mode"):
        resolve_svm_keypair("devnet-svm:solver", mode=Mode.PRODUCTION, devnet_keys=accounts.by_role)
    holder = SvmKeyHolder(address=VAULT, key="devnet-svm:solver")
    solver = resolve_svm_holder(holder, mode=Mode.DEVNET, devnet_keys=accounts.by_role)
    assert solver.pubkey() == accounts.solver().pubkey()
    stranger = SvmKeyHolder(address=str(Keypair().pubkey()), key="devnet-svm:solver")
    with pytest.raises(ConfigError, match="does not belong"):
        resolve_svm_holder(stranger, mode=Mode.DEVNET, devnet_keys=accounts.by_role)


def test_devnet_svm_keys_need_the_devnets_keys_passed_in() -> None:
    """Configuration never loads the devnet: a process not given its keys cannot resolve them."""
    holder = SvmKeyHolder(address=VAULT, key="devnet-svm:solver")
    with pytest.raises(SecretError, match="no devnet keys were given"):
        resolve_svm_holder(holder, mode=Mode.DEVNET)


def test_a_kind_section_no_served_kind_reads_is_refused_naming_it() -> None:
    document = deployment_document()
    document["svm_chains"] = [_svm_chain()]
    with pytest.raises(ConfigError, match="svm_chains"):
        parse_deployment(as_toml(document), source="test", mode=Mode.DEVNET, sections=[EVM_SECTION])


def test_production_refuses_a_devnet_key_in_any_kinds_section() -> None:
    document = deployment_document()
    document["svm_chains"] = [_svm_chain()]
    for role in ("solver", "allocator"):
        document[role]["key"] = "env:CROSSFILL_TEST_KEY"
    with pytest.raises(ConfigError, match=r"svm_chains\(svm\)\.solver\.key: devnet keys"):
        parse_deployment(as_toml(document), source="test", mode=Mode.PRODUCTION, sections=SECTIONS)


def test_a_section_replaced_keeps_the_rest_and_is_checked_like_the_file() -> None:
    deployment = _parse(_svm_chain())
    renamed = SvmChainConfig.model_validate(_svm_chain(name="svm-two"))
    replaced = deployment.with_section(SVM_SECTION, (renamed,))
    assert [chain.name for chain in svm_chains(replaced)] == ["svm-two"]
    assert replaced.chains == evm_chains(deployment)
    assert replaced.serves(SVM_CHAIN_ID) and replaced.protocol_name(SVM_CHAIN_ID) == "svm-two"
    clash = SvmChainConfig.model_validate(_svm_chain(name=evm_chains(deployment)[0].name))
    with pytest.raises(ValueError, match="duplicate name"):
        deployment.with_section(SVM_SECTION, (clash,))
