"""Pool-derived prices: worked out once per market snapshot, and anew for the next one."""

from __future__ import annotations

from crossfill.kinds.evm.market import MarketSnapshot
from crossfill.quoting.prices import price_on_chain
from tests.support import quote_fixtures as fixtures


def _ether_price(reserves: tuple[int, int]) -> tuple[int | None, int | None]:
    config = fixtures.deployment()
    view = fixtures.views(config)[fixtures.CHAINS[0]]
    view.state.market = MarketSnapshot(reserves={fixtures.PAIR: reserves}, feed_rounds={})
    ether = view.config.native_currency
    first = price_on_chain(view.config, view.state, ether, now_seconds=0)
    return first, price_on_chain(view.config, view.state, ether, now_seconds=0)


def test_the_price_is_the_deepest_pools_ratio_and_stays_with_its_snapshot() -> None:
    # 3,000,000 USDC against 1,000 WETH: 3,000 USD per ether, in micro-USD.
    assert _ether_price((3_000_000 * 10**6, 1_000 * fixtures.ETHER)) == (3_000 * 10**6,) * 2


def test_a_new_snapshot_is_priced_anew() -> None:
    config = fixtures.deployment()
    view = fixtures.views(config)[fixtures.CHAINS[0]]
    ether = view.config.native_currency
    before = price_on_chain(view.config, view.state, ether, now_seconds=0)
    view.state.market = MarketSnapshot(
        reserves={fixtures.PAIR: (1_500_000 * 10**6, 1_000 * fixtures.ETHER)}, feed_rounds={}
    )
    assert before == 3_000 * 10**6
    assert price_on_chain(view.config, view.state, ether, now_seconds=0) == 1_500 * 10**6
