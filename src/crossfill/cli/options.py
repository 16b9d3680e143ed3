"""Arguments and options more than one command takes."""

from __future__ import annotations

from typing import Annotated

import typer

from crossfill.domain.identifiers import InvalidIdentifier, parse_chain_id


def chain_id_parameter(text: str) -> int:
    """Chain ids as the API takes them: ASCII digits (click's int() takes any Unicode digit)."""
    try:
        return parse_chain_id(text, "chain id")
    except InvalidIdentifier as exc:
        raise typer.BadParameter(str(exc)) from None


ChainIdArgument = Annotated[int, typer.Argument(parser=chain_id_parameter, help="Chain id")]
KeyReference = Annotated[str, typer.Argument(help="API key id, its shown prefix, or the key")]
ApiProcesses = Annotated[
    int | None,
    typer.Option(min=1, help="API processes sharing the port (more than 1 needs PostgreSQL)"),
]
