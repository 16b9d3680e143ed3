"""The /chains record of a configured chain: what its live state and its settlement say."""

from __future__ import annotations

import pytest

from crossfill.config import parse_deployment
from crossfill.kinds.chain_view import ChainLiveStatus
from crossfill.kinds.evm.config import ChainConfig, evm_chains
from crossfill.kinds.evm.view import chain_wire
from crossfill.kinds.registry import SECTIONS
from crossfill.settings import Mode
from tests.unit.deployment_samples import SOLVER, as_toml, deployment_document

RUNNING = ChainLiveStatus(disabled=False, lagging=False, status_message=None)
DISABLED = ChainLiveStatus(disabled=True, lagging=False, status_message="incident")


def _chain(**fields: object) -> ChainConfig:
    document = deployment_document()
    document["chains"][0].update(fields)
    deployment = parse_deployment(
        as_toml(document), source="deployment.toml", mode=Mode.DEVNET, sections=SECTIONS
    )
    return evm_chains(deployment)[0]


@pytest.mark.parametrize(
    ("fields", "live", "deposits"),
    [
        ({}, RUNNING, True),
        ({}, DISABLED, False),  # an operator's `crossfill chains disable`
        ({"disabled": True}, DISABLED, False),
        ({"deposit_enabled": False}, RUNNING, False),
    ],
)
def test_a_disabled_chain_takes_no_deposits(
    fields: dict[str, object], live: ChainLiveStatus, deposits: bool
) -> None:
    chain = chain_wire(_chain(**fields), live, solver_address=SOLVER)
    assert chain.depositEnabled is deposits
    assert chain.disabled is live.disabled


def test_base_chain_is_the_settlement_chain_or_the_chain_itself() -> None:
    assert chain_wire(_chain(), RUNNING, solver_address=SOLVER).baseChainId == 900001
    rollup = chain_wire(_chain(base_chain_id=1), RUNNING, solver_address=SOLVER)
    assert rollup.baseChainId == 1
