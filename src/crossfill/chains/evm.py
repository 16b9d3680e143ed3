"""An EVM chain over JSON-RPC (web3 AsyncWeb3); web3 errors leave here as ChainError."""

from __future__ import annotations

from dataclasses import dataclass

from web3 import AsyncHTTPProvider, AsyncWeb3
from web3.exceptions import Web3Exception

from crossfill.errors import ChainError, ChainUnreachable
from crossfill.types import ChainId

_TRANSPORT_ERRORS = (OSError, TimeoutError)


@dataclass(frozen=True)
class BlockHead:
    number: int
    timestamp: int
    hash: str


class EvmClient:
    """Reads one chain. Every call is a read, so callers may retry freely."""

    def __init__(self, chain_id: ChainId, rpc_url: str, *, timeout_seconds: float) -> None:
        self.chain_id = chain_id
        self.rpc_url = rpc_url
        self.web3 = AsyncWeb3(
            AsyncHTTPProvider(rpc_url, request_kwargs={"timeout": timeout_seconds})
        )

    async def remote_chain_id(self) -> int:
        try:
            return int(await self.web3.eth.chain_id)
        except _TRANSPORT_ERRORS as exc:
            raise ChainUnreachable(f"chain {self.chain_id}: {self.rpc_url} unreachable") from exc
        except Web3Exception as exc:
            raise ChainError(f"chain {self.chain_id}: eth_chainId failed: {exc}") from exc

    async def head(self) -> BlockHead:
        try:
            block = await self.web3.eth.get_block("latest")
        except _TRANSPORT_ERRORS as exc:
            raise ChainUnreachable(f"chain {self.chain_id}: {self.rpc_url} unreachable") from exc
        except Web3Exception as exc:
            raise ChainError(f"chain {self.chain_id}: latest block: {exc}") from exc
        return BlockHead(
            number=int(block["number"]),
            timestamp=int(block["timestamp"]),
            hash=block["hash"].to_0x_hex(),
        )

    async def check_identity(self) -> None:
        """Raise unless the endpoint answers and serves the configured chain."""
        remote = await self.remote_chain_id()
        if remote != self.chain_id:
            raise ChainError(f"chain {self.chain_id}: {self.rpc_url} serves chain id {remote}")

    async def close(self) -> None:
        await self.web3.provider.disconnect()
