"""A worker's items fail on their own, except when the endpoint behind them asks for fewer
calls: a 429 ends the tick, so the loop backs off (honouring Retry-After) instead of sending
one more call per item."""

from __future__ import annotations

import pytest

from crossfill.errors import ChainError, ChainUnreachable, RateLimited
from crossfill.loops import each_on_its_own


async def _run(failure: Exception) -> list[int]:
    acted: list[int] = []

    async def act(item: int) -> None:
        acted.append(item)
        if item == 1:
            raise failure

    await each_on_its_own("worker", [1, 2, 3], act, label=str)
    return acted


@pytest.mark.parametrize(
    "failure", [ChainError("an answer that cannot be read"), ChainUnreachable("refused")]
)
async def test_an_items_chain_failure_leaves_the_others_going(failure: Exception) -> None:
    assert await _run(failure) == [1, 2, 3]


async def test_an_endpoint_that_answers_429_ends_the_tick() -> None:
    acted: list[int] = []

    async def act(item: int) -> None:
        acted.append(item)
        raise RateLimited("429", retry_after_seconds=5)

    with pytest.raises(RateLimited):
        await each_on_its_own("worker", [1, 2, 3], act, label=str)
    assert acted == [1]
