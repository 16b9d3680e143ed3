"""Models of an EVM chain in the deployment file (`[[chains]]`): its currencies, our contracts
on it, the pools quotes may route through, its fees, its confirmation policy and its sending
keys' gas.

Field names are snake_case in TOML; the API renders the `/chains` camelCase shape from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Final, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from crossfill.config.fields import EvmAddress, HttpUrl, Slug, WsUrl
from crossfill.config.listing import (
    AddressedCurrency,
    ChainListing,
    ConfigModel,
    token_list,
)
from crossfill.config.sections import ConfigSection
from crossfill.domain.confirmations import ConfirmationTier
from crossfill.domain.key_gas import GasFloor, floor_of
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId, TraceApi

if TYPE_CHECKING:
    from crossfill.config.deployment import Deployment


class CurrencyConfig(AddressedCurrency):
    native_address = NATIVE_EVM_ADDRESS
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


Erc20Currencies = Annotated[
    tuple[CurrencyConfig, ...],
    AfterValidator(token_list(NATIVE_EVM_ADDRESS, "erc20_currencies")),
]


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
    # ERC-7683 (docs/erc7683.md): the origin settler whose `Open` orders the indexer takes,
    # and the destination settler the solver fills them through; none, none on this chain.
    erc7683_origin_settler: EvmAddress | None = None
    erc7683_destination_settler: EvmAddress | None = None
    # External solvers' bonds (`SolverBond`, docs/solvers.md): read when an external solver is
    # registered or asked for a bid; none, no external solver is asked for a fill to this chain.
    solver_bond: EvmAddress | None = None


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
        return floor_of(self, fee_per_gas)


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
    erc20_currencies: Erc20Currencies = ()
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

    def key_references(self) -> Mapping[str, str]:
        """None of its own: an EVM chain is sent to with the keys of the file's own roles
        (`solver`, `allocator`), named once for every chain."""
        return {}


def _rebalancing_targets_listed(deployment: Deployment) -> None:
    """Each rebalancing target names an EVM chain of the file and a currency listed on it."""
    for index, target in enumerate(deployment.rebalancing.targets):
        where = f"rebalancing.targets[{index}]"
        chain = evm_chain(deployment, target.chain_id)
        if chain is None:
            raise ValueError(f"{where}: chain {target.chain_id} is no EVM chain of this file")
        if chain.currency(target.currency) is None:
            raise ValueError(
                f"{where}: currency {target.currency} is not listed on chain {chain.id}"
            )


EVM_SECTION: Final = ConfigSection(
    "chains", ChainConfig, required=True, check=_rebalancing_targets_listed
)


def evm_chains(deployment: Deployment) -> tuple[ChainConfig, ...]:
    """The deployment's EVM chains (`[[chains]]`)."""
    return deployment.section(EVM_SECTION)


def evm_chain(deployment: Deployment, chain_id: int) -> ChainConfig | None:
    """The deployment's EVM chain `chain_id`; None: no EVM chain of the file has that id."""
    return next((chain for chain in evm_chains(deployment) if chain.id == chain_id), None)
