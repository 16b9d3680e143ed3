"""Read a deployment file into a validated `Deployment`, or fail naming the bad field."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crossfill.config.deployment import Deployment, deployment_model
from crossfill.config.sections import ConfigSection
from crossfill.errors import ConfigError
from crossfill.settings import Mode


def _field_path(location: tuple[int | str, ...], document: Any) -> str:
    """`chains[1](name).contracts.depository`: the chain's name helps find it in the file."""
    parts: list[str] = []
    node = document
    for step in location:
        child = _child(node, step)
        if isinstance(step, int):
            name = child.get("name") if isinstance(child, dict) else None
            parts.append(f"[{step}]" + (f"({name})" if isinstance(name, str) else ""))
        else:
            parts.append(("." if parts else "") + step)
        node = child
    return "".join(parts) or "<root>"


def _child(node: Any, step: int | str) -> Any:
    if isinstance(node, dict):
        return node.get(step)
    if isinstance(node, list) and isinstance(step, int) and step < len(node):
        return node[step]
    return None


def parse_deployment(
    text: str, *, source: str, mode: Mode, sections: Sequence[ConfigSection[Any]] = ()
) -> Deployment:
    """`sections`: the sections of the kinds served (`kinds.registry.SECTIONS`; a file with a
    section no kind served reads is refused, naming it)."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from exc
    try:
        deployment = deployment_model(tuple(sections)).model_validate(document)
    except ValidationError as exc:
        problems = [
            f"  {_field_path(error['loc'], document)}: {error['msg']}" for error in exc.errors()
        ]
        raise ConfigError(f"{source}: invalid deployment file\n" + "\n".join(problems)) from None
    _check_mode(deployment, source=source, mode=mode)
    return deployment


def _check_mode(deployment: Deployment, *, source: str, mode: Mode) -> None:
    if mode is not Mode.PRODUCTION:
        return
    for role, key in deployment.key_references().items():
        if key.partition(":")[0].startswith("devnet"):  # devnet:N, and each kind's own
            raise ConfigError(
                f"{source}: {role}.key: devnet keys are refused in production mode; "
                "use env:NAME or a key file"
            )


def load_deployment(
    path: Path, *, mode: Mode, sections: Sequence[ConfigSection[Any]] = ()
) -> Deployment:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(
            f"deployment file {path} not found: start the devnet (`make run`) "
            "or set CROSSFILL_DEPLOYMENT_FILE"
        ) from None
    return parse_deployment(text, source=str(path), mode=mode, sections=sections)
