"""What every wire model shares: camelCase on the wire, snake_case in Python, unknown fields
kept (a service may add fields), values immutable once read."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )


class WireRequest(BaseModel):
    """A body or query the client sends: camelCase on the wire, unknown fields refused unless
    the model says otherwise."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def wire(self) -> dict[str, object]:
        """The JSON the service takes: camelCase, fields left unset left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
