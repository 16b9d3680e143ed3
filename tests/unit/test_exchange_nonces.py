"""The exchange's nonce rule: a millisecond time inside (now - 2 days, now + 1 day), once per
signer, and above the smallest of the signer's 100 highest."""

from __future__ import annotations

from crossfill.kinds.perps import nonces

NOW = 1_763_900_000_000
DAY = 24 * 3600 * 1000


def test_a_fresh_nonce_inside_the_window_is_taken() -> None:
    assert nonces.refusal(NOW, now_ms=NOW, kept=[]) is None
    assert nonces.refusal(NOW - 2 * DAY + 1, now_ms=NOW, kept=[]) is None
    assert nonces.refusal(NOW + DAY - 1, now_ms=NOW, kept=[]) is None


def test_nonces_at_or_past_the_window_edges_are_refused() -> None:
    for nonce in (NOW - 2 * DAY, NOW + DAY, 0, 1_000):
        assert nonces.refusal(nonce, now_ms=NOW, kept=[]) == nonces.OUTSIDE_WINDOW


def test_a_nonce_is_taken_once_per_signer() -> None:
    assert nonces.refusal(NOW, now_ms=NOW, kept=[NOW]) == nonces.DUPLICATE


def test_once_100_are_kept_only_nonces_above_the_smallest_are_taken() -> None:
    kept: list[int] = []
    for offset in range(150):
        kept = nonces.keep(kept, NOW - 1000 + offset)
    assert len(kept) == nonces.KEPT_PER_SIGNER
    assert nonces.refusal(min(kept), now_ms=NOW, kept=kept) == nonces.DUPLICATE
    assert nonces.refusal(min(kept) - 1, now_ms=NOW, kept=kept) == nonces.TOO_LOW
    assert nonces.refusal(max(kept) + 1, now_ms=NOW, kept=kept) is None


def test_an_action_is_dead_once_its_nonce_left_the_window() -> None:
    assert nonces.still_landable(NOW, now_ms=NOW + 2 * DAY - 1)
    assert not nonces.still_landable(NOW, now_ms=NOW + 2 * DAY)
