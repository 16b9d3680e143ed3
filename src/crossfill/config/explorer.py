"""A chain's block explorer, as `/chains` shows it (shared by EVM and SVM chains)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ExplorerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = ""
    name: str = ""
    transaction_path: str = "/tx/{hash}"
    address_path: str = "/address/{address}"
    token_path: str = "/token/{address}"
