"""Models of an SVM chain in the deployment file (`[[svm_chains]]`).

An SVM chain has no contracts of ours: deposits go to the solver's vault (its own account and
associated token accounts) with a Memo carrying the order id, and fills are paid from it.
Addresses are base58 and case-sensitive: they are kept exactly as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Final, Literal

from pydantic import AfterValidator, Field, field_validator

from crossfill.config.fields import HttpUrl, Slug, WsUrl
from crossfill.config.listing import (
    AddressedCurrency,
    ChainListing,
    ConfigModel,
    token_list,
)
from crossfill.config.secrets import key_reference
from crossfill.config.sections import ConfigSection
from crossfill.domain.identifiers import InvalidIdentifier, parse_svm_address
from crossfill.types import NATIVE_SVM_ADDRESS, ChainId, SvmAddress

if TYPE_CHECKING:
    from crossfill.config.deployment import Deployment

# The chain id the interface gives its SVM chain (spec, chain-specific identifiers).
SVM_CHAIN_ID: Final = ChainId(792703809)
NATIVE_SVM_DECIMALS: Final = 9


def _svm_address(value: str) -> SvmAddress:
    try:
        return parse_svm_address(value, "address")
    except InvalidIdentifier as exc:
        raise ValueError(str(exc)) from None


SvmAddressField = Annotated[str, AfterValidator(_svm_address)]
SvmKeyRef = Annotated[
    str,
    AfterValidator(
        key_reference(
            r"^(env:[A-Za-z_][A-Za-z0-9_]*|keypair:.+|devnet-svm:[a-z ]{1,32})$",
            "an SVM key reference (env:NAME, keypair:PATH or devnet-svm:ROLE)",
        )
    ),
]


class SvmCurrencyConfig(AddressedCurrency):
    """SOL (address of thirty-two `1`s, 9 decimals) or an SPL token (its mint)."""

    native_address = NATIVE_SVM_ADDRESS
    address: SvmAddressField
    decimals: int = Field(ge=0, le=18)


SvmTokenCurrencies = Annotated[
    tuple[SvmCurrencyConfig, ...],
    AfterValidator(token_list(NATIVE_SVM_ADDRESS, "token_currencies")),
]


class SvmKeyHolder(ConfigModel):
    """The solver's SVM account (its vault) and where its keypair comes from."""

    address: SvmAddressField
    key: SvmKeyRef


class SvmKeyGas(ConfigModel):
    """The least SOL the solver's vault keeps for fees (`[svm_chains.key_gas]`): it pays every
    transaction's fee and the rent of the token accounts it opens for recipients (2,039,280
    lamports each). Below it the chain shows on `/readyz` (`keysLowOnGas`), `/chains` and
    `crossfill_key_gas_low`; nothing of the service on the chain can top it up."""

    # 0.05 SOL: about 24 token fills to recipients without an account, or 10,000 fees alone.
    minimum_lamports: int = Field(default=50_000_000, ge=0, lt=2**64)


class SvmChainConfig(ChainListing):
    id: ChainId = Field(default=SVM_CHAIN_ID, gt=0)
    name: Slug
    vm_type: Literal["svm"] = "svm"
    http_rpc_url: HttpUrl
    ws_rpc_url: WsUrl = ""
    internal_rpc_url: HttpUrl | None = None
    disabled: bool = False
    block_lag_threshold_seconds: float | None = Field(default=60, gt=0)
    # A deposit counts once its transaction reaches this commitment.
    deposit_commitment: Literal["confirmed", "finalized"] = "confirmed"
    # A deposited order whose output the vault's inventory cannot cover waits this long
    # (after its deposit was accepted), then is refunded (SOLVER_CAPACITY_EXCEEDED).
    inventory_wait_seconds: float = Field(default=300, gt=0)
    solver: SvmKeyHolder
    native_currency: SvmCurrencyConfig
    token_currencies: SvmTokenCurrencies = ()
    key_gas: SvmKeyGas = SvmKeyGas()

    @field_validator("native_currency")
    @classmethod
    def _native_is_sol(cls, currency: SvmCurrencyConfig) -> SvmCurrencyConfig:
        if not currency.is_native or currency.decimals != NATIVE_SVM_DECIMALS:
            raise ValueError(
                f"the native currency is {NATIVE_SVM_ADDRESS} with {NATIVE_SVM_DECIMALS} decimals"
            )
        return currency

    @property
    def currencies(self) -> tuple[SvmCurrencyConfig, ...]:
        return (self.native_currency, *self.token_currencies)

    def currency(self, address: str) -> SvmCurrencyConfig | None:
        """Exact match: base58 is case-sensitive."""
        return next((c for c in self.currencies if c.address == address), None)

    @property
    def rpc_url(self) -> str:
        return self.internal_rpc_url or self.http_rpc_url

    @property
    def protocol_name(self) -> str:
        """The chain's name in the protocol (orders and records): its name."""
        return self.name

    def key_references(self) -> Mapping[str, str]:
        return {f"svm_chains({self.name}).solver": self.solver.key}


SVM_SECTION: Final = ConfigSection("svm_chains", SvmChainConfig)


def svm_chains(deployment: Deployment) -> tuple[SvmChainConfig, ...]:
    """The deployment's SVM chains (`[[svm_chains]]`)."""
    return deployment.section(SVM_SECTION)
