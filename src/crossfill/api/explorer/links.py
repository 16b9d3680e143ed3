"""Where the explorer links a transaction or an address: each chain's block explorer, as the
deployment configures it (`explorer = {url, transaction_path, address_path}`). A chain without
an explorer URL (the devnet's) shows its hashes unlinked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from crossfill.config import Deployment
from crossfill.config.explorer import ExplorerConfig
from crossfill.config.listing import ChainListing


@dataclass(frozen=True)
class ChainLinks:
    name: str
    explorer: ExplorerConfig

    def _url(self, path: str, placeholder: str, value: str) -> str | None:
        base = self.explorer.url.rstrip("/")
        if not base.startswith(("https://", "http://")):
            return None
        return base + path.replace(placeholder, quote(value, safe=""))

    def transaction(self, tx_hash: str) -> str | None:
        return self._url(self.explorer.transaction_path, "{hash}", tx_hash)

    def address(self, address: str) -> str | None:
        return self._url(self.explorer.address_path, "{address}", address)


@dataclass(frozen=True)
class Chains:
    """Every chain the deployment lists, of every kind, by id: its name and its links."""

    by_id: Mapping[int, ChainLinks]

    @classmethod
    def of(cls, deployment: Deployment) -> Chains:
        """Every chain whose kind lists it as the operator wrote it (all kinds do)."""
        return cls(
            {
                int(chain.id): ChainLinks(chain.display_name, chain.explorer)
                for chain in deployment.listed_chains
                if isinstance(chain, ChainListing)
            }
        )

    def name(self, chain_id: int) -> str:
        known = self.by_id.get(chain_id)
        return known.name if known is not None else f"chain {chain_id}"

    def transaction_url(self, chain_id: int, tx_hash: str) -> str | None:
        known = self.by_id.get(chain_id)
        return known.transaction(tx_hash) if known is not None else None

    def address_url(self, chain_id: int, address: str) -> str | None:
        known = self.by_id.get(chain_id)
        return known.address(address) if known is not None else None
