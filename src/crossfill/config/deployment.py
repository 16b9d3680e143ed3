"""Models of the deployment file: chains, currencies, contracts, confirmation policy, keys.

Field names are snake_case in TOML; the API renders the `/chains` camelCase shape from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal
from functools import cache, cached_property
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import Field, create_model, field_validator, model_validator

from crossfill.config.fields import EvmAddress, HttpUrl, Slug, WsUrl
from crossfill.config.listing import ChainListing, ConfigModel, ListedCurrency
from crossfill.config.secrets import KeyRef
from crossfill.config.sections import ConfigSection, SectionChain
from crossfill.domain.confirmations import ConfirmationTier
from crossfill.domain.key_gas import GasFloor, floor_of
from crossfill.domain.money import MICROS_PER_USD
from crossfill.domain.repayments import BatchRules
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId, TraceApi


class CurrencyConfig(ListedCurrency):
    address: EvmAddress
    decimals: int = Field(ge=0, le=36)
    withdrawal_fee: float = Field(default=0, ge=0)
    deposit_fee: float = Field(default=0, ge=0)
    surge_enabled: bool = False
    supports_permit: bool = False
    # Where the live price comes from: `fixed` (usd_price), `pool` (this chain's AMM pools against
    # a fixed-price currency, falling back to usd_price) or `feed` (a Chainlink-style aggregator).
    price_source: Literal["fixed", "pool", "feed"] = "fixed"
    price_feed: EvmAddress | None = None
    price_feed_max_age_seconds: int = Field(default=3600, gt=0)

    @model_validator(mode="after")
    def _feed_has_address(self) -> CurrencyConfig:
        if self.price_source == "feed" and self.price_feed is None:
            raise ValueError("price_source feed needs price_feed (the aggregator's address)")
        return self

    @property
    def is_native(self) -> bool:
        return self.address == NATIVE_EVM_ADDRESS


class ContractsConfig(ConfigModel):
    """Addresses of our contracts on one chain (and the AMM deployed beside them)."""

    depository: EvmAddress
    filler: EvmAddress
    receiver: EvmAddress
    router: EvmAddress
    approval_proxy: EvmAddress
    multicaller: EvmAddress
    only_owner_multicaller: EvmAddress
    # Multicaller implements Multicall3's aggregate3 interface, so it serves as multicall3
    # unless a chain has the canonical deployment configured here.
    multicall3: EvmAddress | None = None
    weth: EvmAddress | None = None
    uniswap_v2_factory: EvmAddress | None = None
    uniswap_v2_router: EvmAddress | None = None
    # Deposit addresses (`useDepositAddress`): the factory of their CREATE2 clones; none, none
    # are offered on this chain.
    deposit_address_factory: EvmAddress | None = None
    # Published for clients, never called by the service: an EIP-7702 delegate that runs a
    # batch of calls its account signed (what a user points its code at for `POST /execute`),
    # and a contract that recomputes and recovers a request attestation (`GET
    # /requests/{requestId}/signature`). The devnet deploys both.
    gasless_delegate: EvmAddress | None = None
    attestation_verifier: EvmAddress | None = None


class PoolConfig(ConfigModel):
    """An AMM pair the quote engine may route through; tokens in the pair's own order."""

    address: EvmAddress
    source: Literal["uniswap-v2"] = "uniswap-v2"
    token0: EvmAddress
    token1: EvmAddress

    @model_validator(mode="after")
    def _sorted(self) -> PoolConfig:
        if self.token0.lower() >= self.token1.lower():
            raise ValueError("token0 must be the lower address (the pair's own order)")
        return self


class FeeConfig(ConfigModel):
    """What a fill on this chain costs and what the service charges for it.

    The service fee is basis points by pair class (the same asset bridged; a cross-chain swap;
    a same-chain swap) plus a flat USD amount; wraps, unwraps and sends are free of it.
    """

    service_fee_bps: int = Field(default=10, ge=0, le=1000)
    swap_service_fee_bps: int = Field(default=25, ge=0, le=1000)
    same_chain_service_fee_bps: int = Field(default=0, ge=0, le=1000)
    service_flat_fee_usd: Decimal = Field(default=Decimal(0), ge=0, decimal_places=6)
    fill_swap_gas: int = Field(default=160_000, gt=0)
    # Gas budgeted for a request's destination calls (`txs`) when it gives no txsGasLimit.
    call_gas_default: int = Field(default=300_000, gt=0)
    fill_gas_native: int = Field(default=90_000, gt=0)
    fill_gas_erc20: int = Field(default=120_000, gt=0)
    deposit_gas_native: int = Field(default=60_000, gt=0)
    deposit_gas_erc20: int = Field(default=90_000, gt=0)
    refund_gas_native: int = Field(default=90_000, gt=0)
    refund_gas_erc20: int = Field(default=110_000, gt=0)
    # Head-room on the current base fee when pricing a fill (percent).
    base_fee_buffer_percent: int = Field(default=25, ge=0, le=500)
    fill_time_estimate_seconds: int = Field(default=10, ge=0)


class KeyGasConfig(ConfigModel):
    """Gas for every sending key on a chain (docs/treasury.md): the minimum native balance of
    each key the service sends from, and the target a key below it is topped up to from the
    solver's inventory there. Fixed in wei where set; otherwise that many transactions of
    `transaction_gas` at the fee a transaction offers now."""

    top_up: bool = True
    minimum_wei: int | None = Field(default=None, ge=0, lt=2**255)
    target_wei: int | None = Field(default=None, ge=0, lt=2**255)
    minimum_transactions: int = Field(default=20, ge=0)
    target_transactions: int = Field(default=60, ge=0)
    transaction_gas: int = Field(default=300_000, ge=21_000)
    # How often the keys' balances are read (one batch of eth_getBalance per chain).
    check_interval_seconds: float = Field(default=10, gt=0)

    @model_validator(mode="after")
    def _target_above_minimum(self) -> KeyGasConfig:
        if (
            self.minimum_wei is not None
            and self.target_wei is not None
            and self.target_wei < self.minimum_wei
        ):
            raise ValueError("key_gas.target_wei must be at least key_gas.minimum_wei")
        if self.target_transactions < self.minimum_transactions:
            raise ValueError(
                "key_gas.target_transactions must be at least key_gas.minimum_transactions"
            )
        return self

    def floor(self, fee_per_gas: int) -> GasFloor:
        """The minimum and target at `fee_per_gas` (the fee a transaction offers now)."""
        return floor_of(
            minimum_wei=self.minimum_wei,
            target_wei=self.target_wei,
            minimum_transactions=self.minimum_transactions,
            target_transactions=self.target_transactions,
            transaction_gas=self.transaction_gas,
            fee_per_gas=fee_per_gas,
        )


class ChainConfig(ChainListing):
    id: ChainId = Field(gt=0)
    name: Slug
    vm_type: Literal["evm"] = "evm"
    http_rpc_url: HttpUrl
    ws_rpc_url: WsUrl = ""
    # What workers use when the public URL handed to clients is not reachable from them.
    internal_rpc_url: HttpUrl | None = None
    # The websocket our processes subscribe to new heads on, when `ws_rpc_url` is not reachable
    # from them (see `head_subscription_url`).
    internal_ws_rpc_url: WsUrl = ""
    protocol_chain_id: str | None = None
    token_support: Literal["All", "Limited"] = "All"
    disabled: bool = False
    partial_disable_limit: float = Field(default=0, ge=0)
    withdrawal_fee: float = Field(default=0, ge=0)
    deposit_fee: float = Field(default=0, ge=0)
    surge_enabled: bool = False
    base_chain_id: ChainId | None = None
    block_lag_threshold_seconds: float | None = Field(default=60, gt=0)
    # A transaction of ours unmined this long is re-signed with higher fees.
    replace_stuck_after_seconds: float = Field(default=30, gt=0)
    # A fill whose output the solver's inventory cannot cover (oversubscribed) is not signed:
    # it waits this long after its deposit for repayments or top-ups, then its order is
    # refunded (SOLVER_CAPACITY_EXCEEDED).
    inventory_wait_seconds: float = Field(default=300, gt=0)
    # A fill whose output is covered but not its gas is not signed: it waits this long after
    # its deposit for a top-up, then its order is refunded (SOLVER_BALANCE_TOO_LOW).
    solver_balance_wait_seconds: float = Field(default=300, gt=0)
    # Each sending key's minimum gas balance here, and its top-up (docs/treasury.md).
    key_gas: KeyGasConfig = KeyGasConfig()
    native_currency: CurrencyConfig
    erc20_currencies: tuple[CurrencyConfig, ...] = ()
    contracts: ContractsConfig
    confirmations: tuple[ConfirmationTier, ...] = (ConfirmationTier(blocks=1),)
    # Confirmed deposits are re-checked for reorgs until this many blocks deep.
    finality_blocks: int = Field(default=64, ge=1)
    # The call traces the RPC serves, if any: ether that contracts pay to deposit addresses
    # (smart wallets, exchanges' batches, self-destructs) is then seen too, not only plain
    # transfers. "parity" (`trace_filter`, `trace_transaction`: Erigon, Nethermind, Reth,
    # anvil; `true` says the same) or "geth" (`debug_traceBlockByHash` with the callTracer:
    # geth and its forks, most L2 nodes; every block with transactions is traced whole).
    trace_internal_transfers: TraceApi | None = None
    fees: FeeConfig = FeeConfig()
    pools: tuple[PoolConfig, ...] = ()

    @field_validator("trace_internal_transfers", mode="before")
    @classmethod
    def _traces_as_before(cls, traces: object) -> object:
        """`true` and `false`, as deployment files said before there were two kinds."""
        if traces is True:
            return TraceApi.PARITY
        return None if traces is False else traces

    @field_validator("native_currency")
    @classmethod
    def _native_is_zero_address(cls, currency: CurrencyConfig) -> CurrencyConfig:
        if not currency.is_native:
            raise ValueError(f"native currency address must be {NATIVE_EVM_ADDRESS}")
        return currency

    @field_validator("erc20_currencies")
    @classmethod
    def _erc20s_are_tokens(
        cls, currencies: tuple[CurrencyConfig, ...]
    ) -> tuple[CurrencyConfig, ...]:
        addresses = [currency.address for currency in currencies]
        if NATIVE_EVM_ADDRESS in addresses:
            raise ValueError("the native currency belongs in native_currency, not erc20_currencies")
        if len(set(addresses)) != len(addresses):
            raise ValueError("a currency address is listed twice")
        return currencies

    @field_validator("confirmations")
    @classmethod
    def _tiers_ascend(cls, tiers: tuple[ConfirmationTier, ...]) -> tuple[ConfirmationTier, ...]:
        if not tiers:
            raise ValueError("at least one tier is required")
        bounds = [tier.max_usd for tier in tiers[:-1] if tier.max_usd is not None]
        if len(bounds) != len(tiers) - 1:
            raise ValueError("only the last tier may leave max_usd unset")
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise ValueError("tiers must be ordered by strictly increasing max_usd")
        if tiers[-1].max_usd is not None:
            raise ValueError("the last tier must leave max_usd unset (it covers any value)")
        return tiers

    def currency(self, address: str) -> CurrencyConfig | None:
        return self._currencies_by_address.get(address.lower())

    @cached_property
    def _currencies_by_address(self) -> dict[str, CurrencyConfig]:
        """The currencies by lowercase address, indexed once (a quote looks several up)."""
        by_address: dict[str, CurrencyConfig] = {}
        for currency in self.currencies:
            by_address.setdefault(currency.address.lower(), currency)
        return by_address

    @property
    def settles_on(self) -> ChainId:
        """The chain this one settles on (an L2's L1); a chain that settles on none, an L1 or
        a devnet chain, names itself."""
        return self.base_chain_id if self.base_chain_id is not None else self.id

    @property
    def currencies(self) -> tuple[CurrencyConfig, ...]:
        return (self.native_currency, *self.erc20_currencies)

    @property
    def rpc_url(self) -> str:
        """The URL our own processes call."""
        return self.internal_rpc_url or self.http_rpc_url

    @property
    def head_subscription_url(self) -> str | None:
        """The websocket our own processes subscribe to new heads on; None: poll only. With an
        internal HTTP URL the public websocket is taken to be as unreachable as the public HTTP
        one, so only an internal websocket URL is used then."""
        if self.internal_ws_rpc_url:
            return self.internal_ws_rpc_url
        if self.internal_rpc_url is None and self.ws_rpc_url:
            return self.ws_rpc_url
        return None

    @property
    def protocol_name(self) -> str:
        return self.protocol_chain_id or self.name


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
    """The file's shared settings and its EVM chains; each other kind's chains are a section of
    their own (`config.sections`), fields of the model `deployment_model` builds for them."""

    SECTIONS: ClassVar[tuple[ConfigSection[Any], ...]] = ()

    version: Literal[1] = 1
    quotes: QuoteSettings = QuoteSettings()
    gasless: GaslessSettings = GaslessSettings()
    fast_fill: FastFillSettings = FastFillSettings()
    repayment: RepaymentSettings = RepaymentSettings()
    rebalancing: RebalancingSettings = RebalancingSettings()
    solver: KeyHolder
    allocator: KeyHolder
    chains: tuple[ChainConfig, ...] = Field(min_length=1)

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
    def listed_chains(self) -> tuple[ChainConfig | SectionChain, ...]:
        """Every chain of every kind the file configures."""
        return (*self.chains, *(chain for s in self.SECTIONS for chain in self.section(s)))

    def key_references(self) -> dict[str, str]:
        """Every role's key reference, by the role's name in the file."""
        references = {"solver": self.solver.key, "allocator": self.allocator.key}
        for chain in self.listed_chains:
            if not isinstance(chain, ChainConfig):
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

    def chain(self, chain_id: int) -> ChainConfig | None:
        return next((chain for chain in self.chains if chain.id == chain_id), None)

    @model_validator(mode="after")
    def _targets_on_evm_chains(self) -> Deployment:
        for index, target in enumerate(self.rebalancing.targets):
            where = f"rebalancing.targets[{index}]"
            chain = self.chain(target.chain_id)
            if chain is None:
                raise ValueError(f"{where}: chain {target.chain_id} is no EVM chain of this file")
            if chain.currency(target.currency) is None:
                raise ValueError(
                    f"{where}: currency {target.currency} is not listed on chain {chain.id}"
                )
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
