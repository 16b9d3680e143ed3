"""GET /config/v2: whether a currency bridges between two chains here, how much the solver can
fill per request (its free inventory on the destination: its balance less the outputs of the
orders in flight there, `domain.inventory`), and what a user could bridge. The origin is an
EVM chain; the destination a chain of any kind, whose free inventory its
`KindChain.reserved_inventory` answers."""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.app import registry
from crossfill.app.currencies import currency_id
from crossfill.errors import BadRequest, ChainError, ServiceUnavailable
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig, evm_chain
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


@dataclass(frozen=True)
class _Out:
    """The destination's currency: its key there, its id (`usdc`), its decimals, and whether
    it bridges."""

    key: str
    id: str
    decimals: int
    bridges: bool


def _in_origin_units(amount: int, origin: CurrencyConfig, destination: _Out) -> int:
    return amount * unit(origin.decimals) // unit(destination.decimals)


def _unsupported(wanted: str | None, destination_id: int) -> BadRequest:
    return BadRequest(
        f"currency: {wanted!r} is not a currency of chain {destination_id}",
        error_code="UNSUPPORTED_CURRENCY",
    )


def _evm_out(destination: ChainConfig, wanted: str | None) -> _Out:
    found = destination.native_currency if wanted is None else _by_id(destination, wanted)
    if found is None:
        raise _unsupported(wanted, destination.id)
    address = found.address.lower()
    return _Out(address, currency_id(found), found.decimals, found.supports_bridging)


def _kind_out(runtime: Runtime, destination_id: int, wanted: str | None) -> _Out:
    """A currency of a chain of another kind (by symbol; its first listed by default)."""
    chain = runtime.kind_chains.get(ChainId(destination_id))
    if chain is None:
        raise BadRequest(
            f"destinationChainId: chain {destination_id} is not supported",
            error_code="UNSUPPORTED_CHAIN",
        )
    listed = [currency for currency, _inventory in chain.reserved_inventory().listed()]
    found = next((c for c in listed if wanted in (None, c.symbol.lower())), None)
    if found is None:
        raise _unsupported(wanted, destination_id)
    return _Out(found.key, found.symbol.lower(), found.decimals, True)


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
    evm_destination = evm_chain(runtime.deployment, destination_id)
    currency_out = (
        _kind_out(runtime, destination_id, wanted_currency)
        if evm_destination is None
        else _evm_out(evm_destination, wanted_currency)
    )
    currency_in = _by_id(origin, currency_out.id)
    try:
        free = (
            await runtime.kind_chains[ChainId(destination_id)]
            .reserved_inventory()
            .free(currency_out.key)
        )
    except ChainError:
        raise ServiceUnavailable(f"chain {destination_id} did not answer; try again") from None
    if free is None:
        raise ServiceUnavailable(f"solver inventory on chain {destination_id} not known yet")
    balance = free
    enabled = (
        currency_in is not None
        and currency_in.supports_bridging
        and currency_out.bridges
        and origin.deposit_enabled
        and not runtime.chain_disabled(origin.id)
        and not runtime.chain_disabled(destination_id)
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
