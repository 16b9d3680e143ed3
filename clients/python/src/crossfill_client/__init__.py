"""A typed client of cross-chain intent services speaking the Crossfill interface (quotes,
steps, statuses, listings, gasless execution): `AsyncClient`, and `Client` for code without
an event loop. Signing wallets for `execute` are in `crossfill_client.signing` (the
`signing` extra)."""

from crossfill_client._async_client import DEFAULT_BASE_URL, AsyncClient, ClientOptions
from crossfill_client._execution.runner import ExecutionOptions, ExecutionResult, SentTransaction
from crossfill_client._retry import NO_RETRIES, RetryPolicy
from crossfill_client._sync_client import Client
from crossfill_client._waiting import WaitOptions
from crossfill_client.errors import (
    ApiError,
    AttestationError,
    ChainRpcError,
    ClientError,
    ExchangeRefused,
    ExecuteError,
    ExecutionError,
    QuoteError,
    RateLimited,
    RequestFailed,
    ResponseError,
    TransactionReverted,
    TransportError,
    WaitTimeout,
)
from crossfill_client.models import (
    QuoteRequest,
    RequestFilters,
    RequestStatus,
)
from crossfill_client.signers import Signer

__all__ = [
    "DEFAULT_BASE_URL",
    "NO_RETRIES",
    "ApiError",
    "AsyncClient",
    "AttestationError",
    "ChainRpcError",
    "Client",
    "ClientError",
    "ClientOptions",
    "ExchangeRefused",
    "ExecuteError",
    "ExecutionError",
    "ExecutionOptions",
    "ExecutionResult",
    "QuoteError",
    "QuoteRequest",
    "RateLimited",
    "RequestFailed",
    "RequestFilters",
    "RequestStatus",
    "ResponseError",
    "RetryPolicy",
    "SentTransaction",
    "Signer",
    "TransactionReverted",
    "TransportError",
    "WaitOptions",
    "WaitTimeout",
]
