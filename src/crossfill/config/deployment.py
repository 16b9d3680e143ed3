"""The deployment file's shared settings (quotes, gasless, repayment, rebalancing, the
solver's and allocator's keys) and its model with each kind's section as a field.

Field names are snake_case in TOML. Each kind's chains are its own section's
(`config.sections`), their models in the kind's folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal
from functools import cache
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import Field, create_model, model_validator

from crossfill.config.fields import EvmAddress, HttpUrl
from crossfill.config.listing import ConfigModel
from crossfill.config.secrets import KeyRef
from crossfill.config.sections import ConfigSection, SectionChain
from crossfill.domain.money import MICROS_PER_USD
from crossfill.domain.repayments import BatchRules


class KeyHolder(ConfigModel):
    """A role's on-chain address and where its private key comes from (never the key itself)."""

    address: EvmAddress
    key: KeyRef


class QuoteSettings(ConfigModel):
    """Quote lifetime: the default, and the bounds a client's `ttl` is held within."""

    ttl_seconds: int = Field(default=300, ge=10)
    min_ttl_seconds: int = Field(default=30, ge=1)
    max_ttl_seconds: int = Field(default=3600, ge=10)
    # A swap losing more than this share of its USD value is refused (SWAP_IMPACT_TOO_HIGH)
    # unless the client sets overridePriceImpact.
    max_swap_impact_bps: int = Field(default=500, ge=0, le=10_000)


class RfqSettings(ConfigModel):
    """The auction among external solvers at quote time (docs/solvers.md); none is held while
    no solver is registered."""

    # How long a quote waits for bids, at most (milliseconds): no answer by then is no bid.
    deadline_ms: int = Field(default=300, ge=10, le=5000)
    # How long past the quote's expiry only the winner may fill its order (seconds).
    exclusivity_seconds: int = Field(default=30, ge=1, le=3600)
    # A winner that fades (its order filled by the operator's fallback) is not asked for
    # this long, doubled for each fade in a row (seconds), up to the maximum.
    fade_cooldown_seconds: int = Field(default=60, ge=1, le=86_400)
    max_fade_cooldown_seconds: int = Field(default=7 * 86_400, ge=1)
    # A solver whose reputation is below this is not asked.
    min_reputation: int = Field(default=50, ge=0)
    # A bid's body larger than this (bytes) is no bid.
    max_bid_bytes: int = Field(default=4096, ge=256, le=1_048_576)


class GaslessSettings(ConfigModel):
    """POST /execute: the gas-sponsor wallets the service signs for, and what they may spend.

    An API key whose sponsor wallet (`crossfill keys sponsor`) is one of `sponsors` may ask
    for gasless execution; that wallet sends the transaction and pays its gas."""

    sponsors: tuple[KeyHolder, ...] = ()
    # The most gas one /execute transaction may use (its gas limit, estimate plus headroom).
    max_gas_per_request: int = Field(default=1_500_000, ge=21_000)
    # The most one key's sponsor may spend on gas on one chain, in wei, over all its requests
    # (mined: what they cost; still in flight: their gas limit at the fee they were offered).
    max_spend_per_key_wei: int = Field(default=10**18, ge=0, lt=2**63)

    def sponsor(self, address: str) -> KeyHolder | None:
        return next((s for s in self.sponsors if s.address.lower() == address.lower()), None)


class FastFillSettings(ConfigModel):
    """POST /fast-fill: filling a request once its deposit is seen on chain, before the
    confirmations its value calls for, at the operator's risk. Off unless the operator turns it
    on; then an API key whose sponsor wallet holds owed app fees may ask for it on its own
    requests, up to that balance less its fast fills not yet confirmed (the collateral)."""

    enabled: bool = False


class RepaymentSettings(ConfigModel):
    """Repaying the solver on the EVM chains: each filled order's deposit, once the fill is
    final, paid out of the origin chain's Depository to the solver's address, in batches
    (`domain.repayments`, docs/treasury.md)."""

    enabled: bool = True
    # Most deposits paid in one transaction.
    batch_size: int = Field(default=20, ge=1, le=100)
    # A batch is sent once its oldest deposit's fill is this old, full or not.
    max_age_seconds: float = Field(default=600, ge=0)
    # A batch is sent once it is worth this much (USD), full or not.
    min_batch_value_usd: Decimal = Field(default=Decimal(1000), ge=0, decimal_places=6)

    @property
    def rules(self) -> BatchRules:
        return BatchRules(
            size=self.batch_size,
            max_age=timedelta(seconds=self.max_age_seconds),
            min_value_usd_micros=int(self.min_batch_value_usd * MICROS_PER_USD),
        )


class RebalancingTarget(ConfigModel):
    """Where the solver's inventory of one currency on one chain should stay, in whole units of
    the currency (decimal strings): below `minimum` the rebalancer refills it up to `target`;
    above `maximum` its excess over `target` is moved to the chains below their target
    (`domain.rebalancing`)."""

    chain_id: int
    # The currency's address on that chain.
    currency: EvmAddress
    minimum: Decimal = Field(ge=0)
    target: Decimal = Field(ge=0)
    maximum: Decimal = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> RebalancingTarget:
        if not self.minimum <= self.target <= self.maximum:
            raise ValueError(
                f"chain {self.chain_id} {self.currency}: minimum ≤ target ≤ maximum is required "
                f"(minimum {self.minimum}, target {self.target}, maximum {self.maximum})"
            )
        return self


class RebalancingSettings(ConfigModel):
    """Moving inventory between chains through a bridge: another intents service speaking this
    interface, quoted and paid as any user would (`treasury.intents_api_bridge`,
    docs/treasury.md). Without `bridge_url` no bridge is configured."""

    # The bridge's base URL (its `/quote/v2`, `/intents/status/v3`); on the devnet, the peer
    # deployment's (`crossfill devnet --peer`).
    bridge_url: HttpUrl | None = None
    # Seconds per HTTP call to the bridge.
    bridge_timeout_seconds: float = Field(default=10, gt=0, le=120)
    # Tries per call while the bridge answers 5xx or 429 or cannot be reached, waiting
    # `bridge_backoff_seconds * 2**n` (at most `bridge_backoff_max_seconds`) between them; so
    # are chain calls of a move (its gas estimate, its broadcast).
    bridge_attempts: int = Field(default=4, ge=1, le=20)
    bridge_backoff_seconds: float = Field(default=0.5, gt=0, le=60)
    bridge_backoff_max_seconds: float = Field(default=8, gt=0, le=600)
    # How long `send` waits for one of a move's transactions to be mined before sending the
    # next (an approval before the deposit); past it the move is sent on by a later call.
    bridge_step_timeout_seconds: float = Field(default=60, gt=0, le=3600)
    # The rebalancer (`kinds.evm.rebalancer`) runs when targets exist; false turns it off.
    enabled: bool = True
    # How often it compares each (chain, currency) with its target and follows its moves.
    interval_seconds: float = Field(default=5, gt=0, le=3600)
    # A move the bridge refused (or one whose transaction reverted) is not asked for again
    # between the same chains and currency for this long.
    refused_retry_seconds: float = Field(default=600, ge=0)
    # A move toward a (chain, currency) under way this long, or the bridge silent this long
    # for it, shows on /readyz (`checks.rebalancing`), /chains and `crossfill_rebalance_trouble`.
    stalled_after_seconds: float = Field(default=300, gt=0)
    # Per (chain, currency): minimum, target, maximum.
    targets: tuple[RebalancingTarget, ...] = ()

    @model_validator(mode="after")
    def _backoff_bounds(self) -> RebalancingSettings:
        if self.bridge_backoff_max_seconds < self.bridge_backoff_seconds:
            raise ValueError("bridge_backoff_max_seconds must be at least bridge_backoff_seconds")
        return self

    @model_validator(mode="after")
    def _one_target_each(self) -> RebalancingSettings:
        seen = [(target.chain_id, target.currency.lower()) for target in self.targets]
        duplicates = sorted({f"chain {c} {a}" for c, a in seen if seen.count((c, a)) > 1})
        if duplicates:
            raise ValueError(f"targets: more than one target for {', '.join(duplicates)}")
        return self

    @property
    def runs(self) -> bool:
        """Whether the rebalancer runs: targets exist and it is not turned off."""
        return self.enabled and bool(self.targets)


ChainT = TypeVar("ChainT", bound=SectionChain)


class Deployment(ConfigModel):
    """The file's shared settings; each kind's chains are a section of its own
    (`config.sections`), fields of the model `deployment_model` builds for them."""

    SECTIONS: ClassVar[tuple[ConfigSection[Any], ...]] = ()

    version: Literal[1] = 1
    quotes: QuoteSettings = QuoteSettings()
    gasless: GaslessSettings = GaslessSettings()
    fast_fill: FastFillSettings = FastFillSettings()
    repayment: RepaymentSettings = RepaymentSettings()
    rebalancing: RebalancingSettings = RebalancingSettings()
    rfq: RfqSettings = RfqSettings()
    solver: KeyHolder
    allocator: KeyHolder

    def section(self, section: ConfigSection[ChainT]) -> tuple[ChainT, ...]:
        """The chains of a kind's section; none where the file (or this model) has none."""
        return section.chains(getattr(self, section.key, None))

    def with_section(self, section: ConfigSection[ChainT], chains: Sequence[ChainT]) -> Deployment:
        """This deployment with the section's chains replaced by `chains`."""
        model = deployment_model((*(s for s in self.SECTIONS if s != section), section))
        values = {name: getattr(self, name) for name in type(self).model_fields}
        values[section.key] = (chains[0] if chains else None) if section.single else tuple(chains)
        return model.model_validate(values)

    @property
    def listed_chains(self) -> tuple[SectionChain, ...]:
        """Every chain of every kind the file configures."""
        return tuple(chain for s in self.SECTIONS for chain in self.section(s))

    def key_references(self) -> dict[str, str]:
        """Every role's key reference, by the role's name in the file."""
        references = {"solver": self.solver.key, "allocator": self.allocator.key}
        for chain in self.listed_chains:
            references |= chain.key_references()
        return references

    def protocol_name(self, chain_id: int) -> str:
        """The chain's name in the protocol (records' `protocolChainId`); its id when unknown."""
        listed = next((chain for chain in self.listed_chains if chain.id == chain_id), None)
        return listed.protocol_name if listed is not None else str(chain_id)

    def serves(self, chain_id: int) -> bool:
        return any(chain.id == chain_id for chain in self.listed_chains)

    @model_validator(mode="after")
    def _unique_chains(self) -> Deployment:
        for attribute in ("id", "name"):
            values = [getattr(chain, attribute) for chain in self.listed_chains]
            duplicates = sorted({str(v) for v in values if values.count(v) > 1})
            if duplicates:
                raise ValueError(f"chains: duplicate {attribute} {', '.join(duplicates)}")
        return self

    @model_validator(mode="after")
    def _sections_checked(self) -> Deployment:
        for section in self.SECTIONS:
            if section.check is not None:
                section.check(self)
        return self


@cache
def deployment_model(sections: tuple[ConfigSection[Any], ...]) -> type[Deployment]:
    """The deployment file's model with the given kinds' sections as fields."""
    if not sections:
        return Deployment
    fields: dict[str, Any] = {section.key: section.field() for section in sections}
    model = create_model("Deployment", __base__=Deployment, **fields)
    model.SECTIONS = sections
    return model
