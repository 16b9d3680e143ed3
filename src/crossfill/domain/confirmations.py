"""How many confirmations a deposit needs: more as its value grows."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from crossfill.domain.money import MICROS_PER_USD


class ConfirmationTier(BaseModel):
    """Deposits worth at most `max_usd` (None: any value) wait for `blocks` confirmations.

    An EVM chain's tiers are read from the deployment file
    (`kinds.evm.config.ChainConfig.confirmations`): unknown keys refused, immutable once read,
    as every part of that file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_usd: int | None = Field(default=None, ge=0)
    blocks: int = Field(ge=1, le=1024)


def required_confirmations(tiers: Sequence[ConfirmationTier], value_usd_micros: int) -> int:
    """The first tier whose bound covers the value; the last tier covers any value."""
    for tier in tiers:
        if tier.max_usd is None or value_usd_micros <= tier.max_usd * MICROS_PER_USD:
            return tier.blocks
    return tiers[-1].blocks


def confirmations(head: int, block_number: int) -> int:
    """A deposit in the head block has one confirmation."""
    return max(0, head - block_number + 1)


def deep_enough(
    tiers: Sequence[ConfirmationTier], value_usd_micros: int | None, *, head: int, block_number: int
) -> bool:
    """Whether a transaction in `block_number` has, at `head`, the confirmations its value
    calls for (without a value, the deepest tier's): a deposit before it is acted on, a fill
    before its deposit is repaid to the solver."""
    needed = (
        tiers[-1].blocks
        if value_usd_micros is None
        else required_confirmations(tiers, value_usd_micros)
    )
    return confirmations(head, block_number) >= needed
