"""GET /chains wire shape: the list of every chain's record (`kinds.chain_wire.Chain`)."""

from __future__ import annotations

from pydantic import BaseModel

from crossfill.kinds.chain_wire import Chain


class ChainsResponse(BaseModel):
    chains: list[Chain]
