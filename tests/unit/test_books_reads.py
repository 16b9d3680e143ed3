"""The books' reads of the chain: a Depository's or key's balances in each currency, retried
while the chain fails (unreachable, rate-limited), the last failure raised."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pytest

from crossfill.app import books as books_app
from crossfill.app.books import read_on_chain
from crossfill.errors import ChainUnreachable, RateLimited
from crossfill.kinds.books_port import Holding
from crossfill.kinds.evm.books_reader import EvmBooks
from crossfill.kinds.evm.client import BlockHead, ChainPoll
from crossfill.kinds.evm.config import ChainConfig
from crossfill.kinds.evm.port import EvmPort
from crossfill.types import NATIVE_EVM_ADDRESS

TOKEN = "0x" + "aa" * 20
HOLDER = "0x" + "de" * 20


class FailingThenAnswering:
    """A chain whose balance reads fail `failures` times, then answer."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.asked: list[tuple[str, list[str]]] = []

    async def poll(self, holder: str, tokens: Sequence[str], reads: list[Any]) -> ChainPoll:
        self.asked.append((holder, list(tokens)))
        if len(self.asked) <= self.failures:
            if len(self.asked) % 2:
                raise RateLimited("429", retry_after_seconds=None)
            raise ChainUnreachable("no answer")
        return ChainPoll(BlockHead(1, 1, "0x" + "11" * 32), 0, 7, [5], [])


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(books_app, "READ_RETRIES", (0, 0, 0))


HOLDING = Holding("depository", HOLDER, (NATIVE_EVM_ADDRESS, TOKEN))


def _books(chain: FailingThenAnswering) -> EvmBooks:
    """The EVM chain's books reader over `chain` (its config is not read by `read`)."""
    return EvmBooks(cast(ChainConfig, None), cast(EvmPort, chain), HOLDER)


async def test_balances_are_read_in_each_currency() -> None:
    chain = FailingThenAnswering(0)
    assert await read_on_chain(_books(chain), HOLDING) == {NATIVE_EVM_ADDRESS: 7, TOKEN: 5}
    assert chain.asked == [(HOLDER, [TOKEN])]


async def test_chain_failures_are_retried() -> None:
    chain = FailingThenAnswering(3)
    assert await read_on_chain(_books(chain), HOLDING) == {NATIVE_EVM_ADDRESS: 7, TOKEN: 5}
    assert len(chain.asked) == 4


async def test_a_chain_that_keeps_failing_raises_its_last_failure() -> None:
    chain = FailingThenAnswering(10)
    with pytest.raises(ChainUnreachable):
        await read_on_chain(_books(chain), HOLDING)
    assert len(chain.asked) == 4
