"""Gas for every key: which of the service's sending keys on a chain are below their minimum
native balance, which of them the solver tops up and by how much, and which stay low.

Pure arithmetic over balances read at one block. A key below its minimum is topped up to its
target from what the solver can spare: its gas-currency balance less what its transactions in
flight may take, less what fills waiting on it lack, less the solver's own minimum, less each
top-up's own gas. A top-up is sent only when it lifts the key to at least its minimum (no
dribbles); the lowest key goes first. The solver's own key cannot be topped up: below its
minimum it is only shown (`/readyz`, `/chains`, `crossfill_key_gas_low`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from crossfill.domain.money import format_units

# The role of the solver's own key (every other role is topped up from it).
SOLVER = "solver"
# Why a key stays below its minimum.
SOLVER_LOW = "the solver's own key: fund it by hand"
CANNOT_SPARE = "the solver cannot spare it"
TOP_UPS_OFF = "top-ups are off on this chain (key_gas.top_up)"
REFUSED = "its address reverts a plain transfer"
EXECUTIONS_WAIT = "gasless executions wait until it can pay them"
# Off the EVM chains the solver's own account pays every fee (the SVM vault, the exchange
# account): nothing of the service there can top it up.
OWN_ACCOUNT_LOW = "the solver's own account pays every fee here: fund it by hand"


def sponsor_role(index: int) -> str:
    """The role of the deployment's `gasless.sponsors[index]` (`/readyz`, the metrics)."""
    return f"gasless-sponsor-{index}"


@dataclass(frozen=True)
class GasFloor:
    """A key's minimum native balance on a chain and the target a top-up brings it to, in wei."""

    minimum: int
    target: int

    def __post_init__(self) -> None:
        if not 0 <= self.minimum <= self.target:
            raise ValueError(f"a gas floor needs 0 <= minimum <= target, not {self}")


class GasPolicy(Protocol):
    """A chain's settings for its keys' gas (`[chains.key_gas]`): fixed amounts in wei, or
    None for that many transactions of `transaction_gas`."""

    @property
    def minimum_wei(self) -> int | None: ...

    @property
    def target_wei(self) -> int | None: ...

    @property
    def minimum_transactions(self) -> int: ...

    @property
    def target_transactions(self) -> int: ...

    @property
    def transaction_gas(self) -> int: ...


def floor_of(policy: GasPolicy, fee_per_gas: int) -> GasFloor:
    """The floor `policy` gives: fixed amounts where set, else that many transactions of
    `transaction_gas` at `fee_per_gas` (what a transaction offers now). A fixed minimum
    without a target is topped up to the minimum times the ratio of the transaction counts."""
    minimum_wei, target_wei = policy.minimum_wei, policy.target_wei
    per_transaction = policy.transaction_gas * fee_per_gas
    minimum = (
        minimum_wei if minimum_wei is not None else policy.minimum_transactions * per_transaction
    )
    if target_wei is not None:
        target = target_wei
    elif minimum_wei is not None:
        target = minimum_wei * policy.target_transactions // max(policy.minimum_transactions, 1)
    else:
        target = policy.target_transactions * per_transaction
    return GasFloor(minimum, max(target, minimum))


@dataclass(frozen=True)
class KeyGas:
    """One sending key on a chain: its role (`solver`, `gasless-sponsor-0`, ...), its address
    and its gas-currency balance, in wei."""

    role: str
    address: str
    balance: int
    # What work waiting on the key needs it to hold (a gas sponsor's waiting executions:
    # `SponsorWaiting.needed`); 0: only its floor.
    needed: int = 0

    def floor(self, chain_floor: GasFloor) -> GasFloor:
        """The chain's floor, raised to what waiting work needs of this key."""
        return GasFloor(max(chain_floor.minimum, self.needed), max(chain_floor.target, self.needed))


@dataclass(frozen=True)
class SponsorWaiting:
    """A gas sponsor whose gasless executions wait, unsigned, for want of funds: its role, its
    balance as read, and the balance the costliest of them needs (its value and all its gas at
    the offered fee, beside what the key's transactions in flight may take)."""

    role: str
    balance: int
    needed: int


@dataclass(frozen=True)
class TopUp:
    """Send `amount` wei from the solver to `key`."""

    key: KeyGas
    amount: int


@dataclass(frozen=True)
class LowKey:
    """A key below its minimum that is not being topped up, and why."""

    key: KeyGas
    minimum: int
    reason: str


@dataclass(frozen=True)
class GasPlan:
    top_ups: tuple[TopUp, ...]
    low: tuple[LowKey, ...]


def solver_spare(
    *, available: int, committed: int, solver_minimum: int, waiting_fills_lack: int
) -> int:
    """What the solver can give away in gas currency: what its key may still spend
    (`TxManager.available`: its balance less its transactions in flight) less the outputs in
    it of the orders in flight (`committed`, reserved inventory: `domain.inventory`) and its
    own minimum, and nothing while fills already wait on it."""
    if waiting_fills_lack > 0:
        return 0
    return max(0, available - committed - solver_minimum)


def plan_gas(
    keys: Sequence[KeyGas],
    floor: GasFloor,
    *,
    spare: int,
    transfer_cost: int,
    top_ups_on: bool = True,
    refusing: Collection[str] = (),
) -> GasPlan:
    """Top-ups for the keys below `floor.minimum` (or what work waiting on a key needs it to
    hold, `KeyGas.needed`), lowest first, paid from `spare` (each one also costing
    `transfer_cost`, its own gas); the keys left low, with why. The solver's own
    key is never topped up, nor any while `top_ups_on` is false, nor an address of
    `refusing` (lower case: it reverted a transfer)."""
    top_ups: list[TopUp] = []
    low: list[LowKey] = []
    for key in sorted(keys, key=lambda key: (key.balance, key.role)):
        own = key.floor(floor)
        if key.balance >= own.minimum:
            continue
        refused = (
            SOLVER_LOW
            if key.role == SOLVER
            else TOP_UPS_OFF
            if not top_ups_on
            else REFUSED
            if key.address.lower() in refusing
            else None
        )
        waits = f"; {EXECUTIONS_WAIT}" if key.needed > floor.minimum else ""
        if refused is not None:
            low.append(LowKey(key, own.minimum, refused + waits))
            continue
        can_send = spare - transfer_cost
        amount = min(own.target - key.balance, can_send)
        if amount <= 0 or key.balance + amount < own.minimum:
            low.append(LowKey(key, own.minimum, CANNOT_SPARE + waits))
            continue
        top_ups.append(TopUp(key, amount))
        spare -= amount + transfer_cost
    return GasPlan(tuple(top_ups), tuple(low))


def described(low: LowKey, *, symbol: str, decimals: int) -> str:
    """A key low on gas, in words: its balance, its minimum and why it stays low."""
    balance = format_units(low.key.balance, decimals)
    minimum = format_units(low.minimum, decimals)
    return f"{balance} {symbol}, below its minimum {minimum} {symbol}: {low.reason}"


def own_account_low(address: str, balance: int | None, minimum: int) -> LowKey | None:
    """The solver's own account off the EVM chains, shown low when its fee balance (None:
    not read yet) is below its minimum."""
    if balance is None or balance >= minimum:
        return None
    return LowKey(KeyGas(SOLVER, address, balance), minimum, OWN_ACCOUNT_LOW)
