"""The gas limit a transaction is sent with, from the node's estimate of what it needs."""

from __future__ import annotations

# Above the estimate: state can move between the estimate and inclusion (another deposit, a
# pool's reserves), and a transaction that runs out of gas still pays for what it used.
GAS_HEADROOM_PERCENT = 20


def with_gas_headroom(estimate: int) -> int:
    """`estimate` with the headroom, in whole gas."""
    return estimate * (100 + GAS_HEADROOM_PERCENT) // 100
