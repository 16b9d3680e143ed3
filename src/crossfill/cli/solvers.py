"""`crossfill solvers`: the external solvers asked for bids (docs/solvers.md), through the
running service's admin API (`/admin/solvers`, the operator token `CROSSFILL_ADMIN_TOKEN`), so
their bonds are read from the chains the service serves."""

from __future__ import annotations

import json
from typing import Annotated, Any

import httpx
import typer

from crossfill.cli.console import console
from crossfill.cli.environment import command_settings
from crossfill.errors import CrossfillError

app = typer.Typer(help="External solvers asked for bids at quote time (admin API).")

ServiceUrl = Annotated[
    str | None,
    typer.Option("--url", help="The service (default: http://HOST:PORT of the settings)"),
]
Routes = Annotated[
    list[str] | None,
    typer.Option(
        "--route",
        help="ORIGIN:DESTINATION:CURRENCY[,CURRENCY...] (chain ids, currency addresses)",
    ),
]


class AdminApiError(CrossfillError):
    """The admin API refused a command, or could not be reached."""


def parse_route(text: str) -> dict[str, Any]:
    parts = text.split(":")
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit() or not parts[2]:
        raise AdminApiError(f"--route {text!r}: expected ORIGIN:DESTINATION:CURRENCY[,...]")
    return {
        "originChainId": int(parts[0]),
        "destinationChainId": int(parts[1]),
        "currencies": [c.strip() for c in parts[2].split(",") if c.strip()],
    }


def _call(url: str | None, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    settings = command_settings()
    if not settings.admin_token:
        raise AdminApiError("set CROSSFILL_ADMIN_TOKEN to the service's operator token")
    base = url or f"http://{settings.host}:{settings.port}"
    try:
        response = httpx.request(
            method,
            f"{base.rstrip('/')}/admin/solvers{path}",
            json=body,
            headers={"Authorization": f"Bearer {settings.admin_token}"},
            timeout=30,
        )
    except httpx.HTTPError as exc:
        raise AdminApiError(f"the service at {base} did not answer: {exc}") from None
    try:
        answer = response.json() if response.content else {}
    except ValueError:
        raise AdminApiError(
            f"{base} answered {response.status_code} with no JSON: {response.text[:200]}"
        ) from None
    if response.status_code >= 400:
        known = isinstance(answer, dict)
        code = answer.get("errorCode") if known else None
        message = answer.get("message") if known else response.text[:200]
        raise AdminApiError(
            " ".join(str(p) for p in (response.status_code, code) if p) + f": {message}"
        )
    return answer


def _print(answer: Any) -> None:
    console.print_json(json.dumps(answer))


def _changes(
    evm: str | None,
    svm: str | None,
    bid_url: str | None,
    route: list[str] | None,
    max_size_usd: str | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if evm is not None or svm is not None:
        body["addresses"] = {k: v for k, v in (("evm", evm), ("svm", svm)) if v is not None}
    if bid_url is not None:
        body["bidUrl"] = bid_url
    if route:
        body["routes"] = [parse_route(text) for text in route]
    if max_size_usd is not None:
        body["maxSizeUsd"] = max_size_usd
    return body


@app.command("register")
def register(
    name: str,
    evm: Annotated[str, typer.Option(help="EVM address that signs its bids")],
    bid_url: Annotated[str, typer.Option(help="Its bid endpoint (POST)")],
    route: Routes,
    max_size_usd: Annotated[str, typer.Option(help="Largest order, USD")],
    svm: Annotated[str | None, typer.Option(help="Its SVM address")] = None,
    url: ServiceUrl = None,
) -> None:
    """Register an external solver (its bond is read from the chains)."""
    body = {"name": name, **_changes(evm, svm, bid_url, route, max_size_usd)}
    _print(_call(url, "POST", "", body))


@app.command("list")
def list_solvers(url: ServiceUrl = None) -> None:
    """Every registered solver, with its bonds and what its open exclusive orders hold."""
    _print(_call(url, "GET", ""))


@app.command("show")
def show(name: str, url: ServiceUrl = None) -> None:
    _print(_call(url, "GET", f"/{name}"))


@app.command("update")
def update(
    name: str,
    evm: Annotated[str | None, typer.Option(help="EVM address that signs its bids")] = None,
    svm: Annotated[str | None, typer.Option(help="Its SVM address")] = None,
    bid_url: Annotated[str | None, typer.Option(help="Its bid endpoint (POST)")] = None,
    route: Routes = None,
    max_size_usd: Annotated[str | None, typer.Option(help="Largest order, USD")] = None,
    reputation: Annotated[int | None, typer.Option(help="Its reputation (asked at >= bar)")] = None,
    clear_cooldown: Annotated[bool, typer.Option(help="End its cooldown now")] = False,
    url: ServiceUrl = None,
) -> None:
    """Change what is given (routes given replace all of them)."""
    body = _changes(evm, svm, bid_url, route, max_size_usd)
    if reputation is not None:
        body["reputation"] = reputation
    if clear_cooldown:
        body["clearCooldown"] = True
    _print(_call(url, "PATCH", f"/{name}", body))


@app.command("remove")
def remove(name: str, url: ServiceUrl = None) -> None:
    """Ask it for no more bids."""
    _print(_call(url, "DELETE", f"/{name}"))
