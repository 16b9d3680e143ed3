"""Market reads of one chain: AMM pair reserves and price-feed rounds (read by the follower)."""

from __future__ import annotations

from dataclasses import dataclass, field

from eth_abi.exceptions import DecodingError

from crossfill.contracts.abi import PRICE_FEED, V2_PAIR, AbiFunction, function
from crossfill.kinds.evm.client import Read
from crossfill.kinds.evm.config import ChainConfig


def _get_reserves() -> AbiFunction:
    return function(V2_PAIR, "getReserves")


def _latest_round_data() -> AbiFunction:
    return function(PRICE_FEED, "latestRoundData")


def _decimals() -> AbiFunction:
    return function(PRICE_FEED, "decimals")


@dataclass(frozen=True)
class FeedRound:
    """A Chainlink-style aggregator's latest answer: `answer / 10**decimals` USD per unit."""

    answer: int
    decimals: int
    updated_at: int


@dataclass(frozen=True)
class MarketSnapshot:
    # Lower-case pair address -> (reserve0, reserve1).
    reserves: dict[str, tuple[int, int]]
    # Lower-case currency address -> its feed's latest round.
    feed_rounds: dict[str, FeedRound]
    # Prices derived from these reserves, kept by `quoting.prices` as it first works each out
    # (every quote of a head asks for the same few): (pool token, decimals) -> micro-USD.
    pool_prices: dict[tuple[str, int], int | None] = field(default_factory=dict, compare=False)


def _reserves(returned: bytes | None) -> tuple[int, int] | None:
    if returned is None or len(returned) < 96:
        return None
    try:
        reserve0, reserve1, _timestamp = _get_reserves().decode_output(returned)
    except DecodingError:
        return None
    return int(reserve0), int(reserve1)


def _feed_round(latest: bytes | None, decimals: bytes | None) -> FeedRound | None:
    if latest is None or decimals is None or len(latest) < 160 or len(decimals) < 32:
        return None
    try:
        _round, answer, _started, updated_at, _answered = _latest_round_data().decode_output(latest)
        (places,) = _decimals().decode_output(decimals[:32])
    except DecodingError:
        return None
    return FeedRound(answer=int(answer), decimals=int(places), updated_at=int(updated_at))


def market_reads(config: ChainConfig) -> list[Read]:
    """The calls that read every configured pool's reserves and every price feed's round."""
    feeds = [c for c in config.currencies if c.price_feed is not None]
    reads: list[Read] = [(pool.address, _get_reserves().encode()) for pool in config.pools]
    for currency in feeds:
        assert currency.price_feed is not None
        reads += [
            (currency.price_feed, _latest_round_data().encode()),
            (currency.price_feed, _decimals().encode()),
        ]
    return reads


def market_snapshot(config: ChainConfig, returned: list[bytes | None]) -> MarketSnapshot:
    """What `market_reads(config)` returned; a failed read leaves its pool or feed out."""
    feeds = [c for c in config.currencies if c.price_feed is not None]
    pool_replies, feed_replies = returned[: len(config.pools)], returned[len(config.pools) :]
    reserves = {
        pool.address.lower(): pair
        for pool, reply in zip(config.pools, pool_replies, strict=True)
        if (pair := _reserves(reply)) is not None
    }
    rounds = {
        currency.address.lower(): latest
        for index, currency in enumerate(feeds)
        if (latest := _feed_round(feed_replies[2 * index], feed_replies[2 * index + 1])) is not None
    }
    return MarketSnapshot(reserves=reserves, feed_rounds=rounds)
