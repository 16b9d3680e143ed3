"""A mutation fuzzer over every kind of quote, against the real service on the devnet (its EVM
chains, the SVM node and the perps exchange): valid bodies of each kind (`quote_seeds`), a few
fields at a time made hostile (`mutations`), posted to /quote/v2, /quote and /price.

Required of every answer: never a 5xx, never a dropped connection; a 4xx in the spec's error
shape (`quote-error`, the Detailed one when a simulation refused it) with its `errorCode` and
`statusCode`; a 200 in the quote's (or price's) wire schema. And some mutated bodies of each
kind must still be quoted, which shows the fuzzer reaches planning (schemathesis, building
bodies from the schema alone, is refused before it).

`make test` runs a bounded pass (CROSSFILL_MUTATION_EXAMPLES, 300 by default, the same examples
each run); `make fuzz` a long one with fresh examples (CROSSFILL_FUZZ_FULL=1).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings

from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.log_setup import configure_logging
from tests.adversarial.cross_vm import quoted
from tests.adversarial.mutations import Mutant, found_before, mutants
from tests.adversarial.quote_seeds import devnet_addresses, seeds
from tests.conftest import RunningDevnet
from tests.e2e.conftest import validate_against

EXAMPLES = int(os.environ.get("CROSSFILL_MUTATION_EXAMPLES", "300"))
FULL = os.environ.get("CROSSFILL_FUZZ_FULL") == "1"
# Of the mutated bodies, at least this share must be quoted (200).
MINIMUM_QUOTED_SHARE = 0.1


class Tally:
    """Answers by kind of seed and status."""

    def __init__(self) -> None:
        self.statuses: Counter[tuple[str, int]] = Counter()

    def count(self, mutant: Mutant, status: int) -> None:
        self.statuses[(mutant.kind, status)] += 1

    def quoted(self, kind: str | None = None) -> int:
        return sum(
            n for (k, status), n in self.statuses.items() if status == 200 and kind in (k, None)
        )

    def total(self) -> int:
        return sum(self.statuses.values())

    def kinds(self) -> set[str]:
        return {kind for kind, _status in self.statuses}

    def __str__(self) -> str:
        return ", ".join(
            f"{kind} {status}: {n}" for (kind, status), n in sorted(self.statuses.items())
        )


def _post(client: httpx.Client, mutant: Mutant) -> httpx.Response:
    try:
        return client.post(
            mutant.endpoint,
            content=mutant.encoded(),
            headers={"content-type": "application/json"},
        )
    except httpx.TransportError as exc:
        pytest.fail(f"the connection dropped ({exc!r}) on {mutant}")


def _check(mutant: Mutant, answer: httpx.Response) -> None:
    status = answer.status_code
    assert status < 500, f"{status} {answer.text[:500]} on {mutant}"
    document: Any = answer.json()
    if status == 200:
        validate_against("price" if mutant.endpoint == "/price" else "quote", document)
        return
    validate_against("quote-error", document)
    if "failedCallData" in document:
        validate_against("quote-error-detailed", document)
    assert isinstance(document.get("errorCode"), str), (document, mutant)
    assert document.get("statusCode") == status, (document, mutant)


# The service runs in a thread of this process, and its loops draw from `random` (backoff
# jitter) while hypothesis draws a body: hypothesis sees the global state move and warns, though
# the strategies never touch it.
@pytest.mark.filterwarnings(
    "ignore:Do not use the `random` module inside strategies"
    ":hypothesis.errors.HypothesisDeprecationWarning"
)
def test_no_mutation_of_a_valid_quote_is_a_5xx_or_drops_the_connection(
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    cross_vm: httpx.Client,
    root_logging: None,
) -> None:
    # Logged as the service logs in production (plain tracebacks): a 500 is told at once,
    # where structlog's default pretty traceback with locals takes seconds per 500.
    configure_logging(json_logs=False, level="WARNING")
    at = devnet_addresses(devnet, svm_node[1])
    seed_bodies = seeds(at)
    for seed in seed_bodies:
        quoted(cross_vm, seed.body)  # each seed is valid (and the service has its chain state)
    tally = Tally()

    @settings(
        max_examples=EXAMPLES,
        derandomize=not FULL,
        database=None,
        deadline=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
    )
    @given(mutants(seed_bodies, at))
    def answered_in_shape(mutant: Mutant) -> None:
        answer = _post(cross_vm, mutant)
        _check(mutant, answer)
        tally.count(mutant, answer.status_code)

    for regression in found_before(seed_bodies):
        answered_in_shape = example(regression)(answered_in_shape)
    answered_in_shape()
    print(f"\n{tally.total()} mutated bodies: {tally}")
    assert tally.kinds() == {seed.kind for seed in seed_bodies}, tally
    for kind in tally.kinds():
        assert tally.quoted(kind) > 0, f"no mutated {kind} body was quoted: {tally}"
    assert tally.quoted() >= MINIMUM_QUOTED_SHARE * tally.total(), tally
