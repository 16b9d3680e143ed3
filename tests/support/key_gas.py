"""What a suite reads of a key's gas on a running service: `/readyz`'s `keysLowOnGas`, the
chains' `statusMessage` on `/chains`, and `crossfill_key_gas_low`."""

from __future__ import annotations

from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families


def low_on_gas(base_url: str) -> dict[str, dict[str, str]]:
    """`/readyz`'s `keysLowOnGas` (empty when none is low); the service is ready meanwhile."""
    response = httpx.get(f"{base_url}/readyz", timeout=10)
    assert response.status_code == 200, response.text
    shown: dict[str, dict[str, str]] = response.json()["checks"].get("keysLowOnGas", {})
    return shown


def status_messages(base_url: str) -> dict[int, str | None]:
    chains: list[dict[str, Any]] = httpx.get(f"{base_url}/chains", timeout=10).json()["chains"]
    return {chain["id"]: chain["statusMessage"] for chain in chains}


def key_gas_low(base_url: str, chain_id: int, key: str) -> float | None:
    """`crossfill_key_gas_low` of `key` on `chain_id` (None: not exported)."""
    scraped = text_string_to_metric_families(httpx.get(f"{base_url}/metrics", timeout=10).text)
    return next(
        (
            sample.value
            for family in scraped
            for sample in family.samples
            if sample.name == "crossfill_key_gas_low"
            and sample.labels == {"chain_id": str(chain_id), "key": key}
        ),
        None,
    )
