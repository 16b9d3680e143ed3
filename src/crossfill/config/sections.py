"""A chain kind's own part of the deployment file.

The deployment file's shared settings are the core's; every kind of chain brings its own
section (`[[chains]]` for the EVM chains, `[[svm_chains]]`, `[perps]`): the key it is written
under and the model of one chain in it. The loader is given the sections of the kinds served
(`kinds.registry.SECTIONS`) and validates each in place, so a bad field is named with its path
like any other, and a kind reads its chains back with `Deployment.section`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import Field

from crossfill.types import ChainId


class SectionChain(Protocol):
    """What the core reads of any kind's chain in the file: its id and names, and the keys its
    roles are signed with (refused in production when they name a devnet key)."""

    @property
    def id(self) -> ChainId: ...

    @property
    def name(self) -> str: ...

    @property
    def protocol_name(self) -> str: ...

    def key_references(self) -> Mapping[str, str]:
        """Each role's key reference (`env:…`, `keystore:…`, `devnet:…`), by the role's name."""
        ...


ChainT = TypeVar("ChainT", bound=SectionChain)


@dataclass(frozen=True)
class ConfigSection(Generic[ChainT]):
    """`key`: the TOML key the kind's chains are written under; `model`: one chain's model;
    `single`: one table (`[perps]`) rather than an array of them (`[[svm_chains]]`);
    `required`: an array every file has, with one chain at least (`[[chains]]`);
    `check`: what the kind checks of the whole file once every section is read (the shared
    settings that name its chains), raising `ValueError` naming the bad entry."""

    key: str
    model: type[ChainT]
    single: bool = False
    required: bool = False
    check: Callable[[Any], None] | None = None

    def field(self) -> tuple[Any, Any]:
        """The section as a field of the deployment model: its type and its default."""
        if self.single:
            return self.model | None, None
        chains = tuple[self.model, ...]  # type: ignore[name-defined]
        return chains, (Field(min_length=1) if self.required else ())

    def chains(self, value: object) -> tuple[ChainT, ...]:
        """The section's chains, from the field's value."""
        if value is None:
            return ()
        if isinstance(value, self.model):
            return (value,)
        assert isinstance(value, tuple | list)  # a list: a copy updated with one (`model_copy`)
        return tuple(value)
