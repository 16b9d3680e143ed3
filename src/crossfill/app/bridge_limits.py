"""GET /config/v2: whether a currency bridges between two chains here, how much the solver can
fill per request (its free inventory on the destination: its balance less the outputs of the
orders in flight there, `domain.inventory`), and what a user could bridge."""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.app import registry
from crossfill.app.currencies import currency_id
from crossfill.errors import BadRequest, ChainError, ServiceUnavailable
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig
from crossfill.quoting.money import unit
from crossfill.runtime import Runtime
from crossfill.types import Address, ChainId


@dataclass(frozen=True)
class UserLimit:
    balance: int  # on the origin chain
    max_bridge_amount: int  # what the balance allows after the deposit's gas, within capacity


@dataclass(frozen=True)
class BridgeLimits:
    enabled: bool
    solver_address: str
    solver_balance: int  # free inventory, in the destination currency's smallest unit
    capacity_per_request: int
    user: UserLimit | None


def _by_id(chain: ChainConfig, wanted: str) -> CurrencyConfig | None:
    return next((c for c in chain.currencies if currency_id(c) == wanted), None)


def _in_origin_units(amount: int, origin: CurrencyConfig, destination: CurrencyConfig) -> int:
    return amount * unit(origin.decimals) // unit(destination.decimals)


async def _user_limit(
    runtime: Runtime, origin: ChainConfig, currency: CurrencyConfig, user: Address, capacity: int
) -> UserLimit:
    chain = evm_chains(runtime)[ChainId(origin.id)]
    try:
        balance, _ = await chain.client.balance_and_allowance(
            currency.address, user, origin.contracts.depository
        )
    except ChainError:
        raise ServiceUnavailable(f"chain {origin.id} did not answer; try again") from None
    spendable = balance
    if currency.is_native:
        fee = chain.state.fee_per_gas(origin.fees.base_fee_buffer_percent) or 0
        spendable = max(0, balance - origin.fees.deposit_gas_native * fee)
    return UserLimit(balance, min(spendable, capacity))


async def bridge_limits(
    runtime: Runtime,
    origin_id: int,
    destination_id: int,
    *,
    user: Address | None,
    wanted_currency: str | None,
) -> BridgeLimits:
    origin = registry.chain(runtime, origin_id, "originChainId")
    destination = registry.chain(runtime, destination_id, "destinationChainId")
    currency_out = (
        destination.native_currency
        if wanted_currency is None
        else _by_id(destination, wanted_currency)
    )
    if currency_out is None:
        raise BadRequest(
            f"currency: {wanted_currency!r} is not a currency of chain {destination.id}",
            error_code="UNSUPPORTED_CURRENCY",
        )
    currency_in = _by_id(origin, currency_id(currency_out))
    balance = evm_chains(runtime)[ChainId(destination.id)].state.solver_free(currency_out.address)
    if balance is None:
        raise ServiceUnavailable(f"solver inventory on chain {destination.id} not known yet")
    enabled = (
        currency_in is not None
        and currency_in.supports_bridging
        and currency_out.supports_bridging
        and origin.deposit_enabled
        and not runtime.chain_disabled(origin.id)
        and not runtime.chain_disabled(destination.id)
    )
    user_limit = None
    if user is not None and currency_in is not None:
        capacity = _in_origin_units(balance, currency_in, currency_out)
        user_limit = await _user_limit(runtime, origin, currency_in, user, capacity)
    return BridgeLimits(
        enabled=enabled,
        solver_address=runtime.deployment.solver.address,
        solver_balance=balance,
        capacity_per_request=balance,
        user=user_limit,
    )
