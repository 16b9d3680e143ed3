"""External solvers' bonds as their chain's `SolverBond` holds them (docs/solvers.md)."""

from __future__ import annotations

from crossfill.contracts import calldata
from crossfill.errors import ChainError
from crossfill.kinds.evm.port import EvmPort


async def bond_of(client: EvmPort, solver_bond: str, solver: str, currency: str) -> int:
    """What `solver` has bonded in `currency` (the zero address: the gas currency) at the
    latest block; ChainError when the chain does not answer or the contract is not there."""
    returned = await client.call(solver_bond, calldata.solver_bond_of(solver, currency))
    if len(returned) != 32:
        raise ChainError(f"SolverBond {solver_bond}.bondOf answered {returned.hex()}")
    return calldata.bond_answer(returned)
