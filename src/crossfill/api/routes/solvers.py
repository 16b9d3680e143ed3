"""`/admin/solvers`: the external solvers asked for bids at quote time (docs/solvers.md),
behind the operator token as every admin route. A solver is named in the path; its bond is
read from the chain in every answer."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.params import ChainIdField, Label
from crossfill.api.routes.admin import operator_only
from crossfill.api.schemas.responses import SolverList, SolverRemoved, SolverView
from crossfill.app import solver_registry
from crossfill.app.solver_registry import SolverChanges
from crossfill.domain.solvers import SolverRoute

router = APIRouter(
    prefix="/admin/solvers",
    tags=["admin"],
    dependencies=[Depends(operator_only)],
    responses=responses(None, 401, 403, 429),
)
SolverName = Annotated[
    str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
]
CHANGED = responses(SolverView, 400, 401, 403, 404, 409, 503)


class RouteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    originChainId: ChainIdField
    destinationChainId: ChainIdField
    currencies: Annotated[
        list[Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]{40}$")]],
        Field(min_length=1, max_length=50),
    ]

    def route(self) -> SolverRoute:
        return SolverRoute(
            self.originChainId,
            self.destinationChainId,
            frozenset(currency.lower() for currency in self.currencies),
        )


Addresses = dict[Literal["evm", "svm"], Annotated[str, Field(min_length=1, max_length=100)]]
Routes = Annotated[list[RouteBody], Field(min_length=1, max_length=100)]
Url = Annotated[str, Field(min_length=1, max_length=2000)]
MaxSize = Annotated[Decimal, Field(gt=0, description="USD notional of one order, at most")]


class SolverChangesBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    addresses: Addresses | None = None
    bidUrl: Url | None = None
    routes: Routes | None = None
    maxSizeUsd: MaxSize | None = None
    reputation: Annotated[int, Field(ge=0, le=1_000_000)] | None = None
    cooldownUntil: AwareDatetime | None = None
    clearCooldown: bool = False

    def changes(self) -> SolverChanges:
        return SolverChanges(
            addresses=None
            if self.addresses is None
            else {str(k): v for k, v in self.addresses.items()},
            bid_url=self.bidUrl,
            routes=None if self.routes is None else tuple(r.route() for r in self.routes),
            max_size_usd=self.maxSizeUsd,
            reputation=self.reputation,
            cooldown_until=self.cooldownUntil,
            clear_cooldown=self.clearCooldown,
        )


class NewSolver(SolverChangesBody):
    name: Annotated[
        Label, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    ]
    addresses: Addresses
    bidUrl: Url
    routes: Routes
    maxSizeUsd: MaxSize


@router.post(
    "",
    status_code=201,
    response_model=None,
    responses=responses(SolverView, 400, 401, 403, 409, 503, ok_status=201),
)
async def register_solver(body: NewSolver, runtime: RuntimeDep) -> dict[str, Any]:
    """Register an external solver; its bond is read from each route's destination."""
    return (await solver_registry.register(runtime, body.name, body.changes())).wire()


@router.get("", response_model=None, responses=responses(SolverList, 401, 403, 503))
async def list_solvers(runtime: RuntimeDep) -> dict[str, Any]:
    return {"solvers": [view.wire() for view in await solver_registry.listing(runtime)]}


@router.get("/{name}", response_model=None, responses=CHANGED)
async def show_solver(name: SolverName, runtime: RuntimeDep) -> dict[str, Any]:
    return (await solver_registry.show(runtime, name)).wire()


@router.patch("/{name}", response_model=None, responses=CHANGED)
async def update_solver(
    name: SolverName, body: SolverChangesBody, runtime: RuntimeDep
) -> dict[str, Any]:
    """Change what is given; the rest stays."""
    return (await solver_registry.update(runtime, name, body.changes())).wire()


@router.delete(
    "/{name}", response_model=None, responses=responses(SolverRemoved, 400, 401, 403, 404)
)
async def remove_solver(name: SolverName, runtime: RuntimeDep) -> dict[str, Any]:
    """Ask it for no more bids (its exclusive orders keep their solver)."""
    await solver_registry.remove(runtime, name)
    return {"name": name, "removed": True}
