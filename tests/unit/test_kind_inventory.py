"""The solver's reserved inventory on chains read at times (the SVM chain, the perps
exchange): what fills just paid still commit until a balance read after them
(`domain.inventory.unread`, `kinds.timed_inventory`), and which deposited orders the balance
covers, taken in deposit order (`domain.inventory.served_in_order`)."""

from __future__ import annotations

from crossfill.domain.inventory import Landed, served_in_order, unread
from crossfill.kinds.port import InventoryCurrency
from crossfill.kinds.timed_inventory import TimedInventory

SOL = "So11111111111111111111111111111111111111111"
USDC = "EPjFWdd5AufqSSqeM2qACdYv6nQXBZkkk4Ht7dAJ2B8Q"


def test_orders_are_served_in_order_passing_over_one_that_does_not_fit() -> None:
    waiting = [("a", {USDC: 80}), ("b", {USDC: 50}), ("c", {USDC: 20})]
    assert served_in_order({USDC: 100}, [], waiting) == {"a", "c"}


def test_payments_already_sent_are_taken_first() -> None:
    waiting = [("a", {USDC: 80}), ("b", {USDC: 20})]
    assert served_in_order({USDC: 100}, [{USDC: 30}], waiting) == {"b"}
    assert served_in_order({USDC: 100}, [{USDC: 100}], waiting) == set()


def test_every_currency_an_order_takes_must_be_covered_and_unknown_ones_are_not_counted() -> None:
    waiting = [("a", {USDC: 10, SOL: 5}), ("b", {USDC: 10, SOL: 1})]
    assert served_in_order({USDC: 100, SOL: 3}, [], waiting) == {"b"}
    assert served_in_order({USDC: None, SOL: 6}, [], waiting) == {"a", "b"}


def test_a_fill_paid_after_the_last_read_is_still_unread() -> None:
    landed = [Landed(5.0, {USDC: 7, SOL: 1}), Landed(2.0, {USDC: 3})]
    marks = {USDC: 3.0, SOL: 6.0}
    assert unread(landed, marks.__getitem__) == {USDC: 7}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _inventory(clock: Clock) -> TimedInventory:
    currencies = (InventoryCurrency(SOL, "SOL", 9), InventoryCurrency(USDC, "USDC", 6))
    return TimedInventory(currencies, clock, key=str)


def test_free_is_the_balance_read_less_the_orders_in_flight_and_the_fills_not_yet_read() -> None:
    clock = Clock()
    held = _inventory(clock)
    assert held.free_now(USDC) is None  # never read: not known
    held.read({USDC: 100, SOL: 50}, started_at=1.0)
    clock.now = 2.0
    paid = Landed(held.landed_mark(0), {USDC: 30})
    held.hold({USDC: 40}, [paid], owed=None, in_transit=None)
    assert held.committed(USDC) == 70
    assert held.free_now(USDC) == 30
    # A read started before the payment was seen still counts it off; one started after shows
    # the payment in the balance, and it is committed no more.
    held.read({USDC: 100}, started_at=1.5)
    assert held.committed(USDC) == 70
    held.read({USDC: 70}, started_at=3.0)
    assert held.committed(USDC) == 40
    assert held.free_now(USDC) == 30
    # Oversubscribed: never below 0.
    held.hold({USDC: 90}, [], owed=None, in_transit=None)
    assert held.free_now(USDC) == 0
    over = held.inventory(USDC)
    assert over is not None and over.free == -20


def test_an_older_read_finishing_late_does_not_replace_a_newer_one() -> None:
    held = _inventory(Clock())
    held.read({USDC: 10}, started_at=5.0)
    held.read({USDC: 99}, started_at=4.0)
    assert (held.last_balance(USDC), held.read_mark(USDC)) == (10, 5.0)


def test_only_configured_currencies_are_checked_and_listed() -> None:
    held = _inventory(Clock())
    held.read({USDC: 10}, started_at=1.0)
    assert held.checked(USDC) and not held.checked("other")
    assert [(c.symbol, found) for c, found in held.listed()] == [
        ("SOL", None),
        ("USDC", held.inventory(USDC)),
    ]
