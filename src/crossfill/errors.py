"""Crossfill's exceptions: one root, mapped to API error bodies at the HTTP boundary.

    CrossfillError
    ├── ConfigError (ValueError)            a bad deployment file or setting; names the field
    │   └── SecretError                     a key reference that cannot be resolved or is refused
    ├── ToolchainMissing (RuntimeError)     npm tools or compiled artifacts are not installed
    ├── ContractBuildError (RuntimeError)   solc rejected the sources
    ├── DevnetError (RuntimeError)          an anvil process or a devnet deployment step failed
    ├── ChainError                          an RPC call failed or a chain answered unexpectedly
    │   ├── Reverted                        the contract refused: the only refusal of an order
    │   ├── ProgramFailed                   an SVM program refused: the SVM twin of Reverted
    │   ├── ChainNotFound                   the SVM node does not know that transaction/account
    │   ├── ActionRefused                   the perps exchange refused a signed action
    │   ├── NodeBehind                      the node that answered has not reached that block
    │   ├── LogsRefused                     the node refused a log query (its range or result limit)
    │   ├── BatchRefused                    the node refused a JSON-RPC batch whole (sent singly)
    │   └── ChainUnreachable (ConnectionError)
    │       └── RateLimited                 the node asked us to slow down (HTTP 429)
    ├── StoreError                          the database failed or is not migrated
    ├── SignerBusy                          another process holds this signing key's lease
    └── ApiError                            answered to a client as {message, statusCode, ...}
        ├── BadRequest (ValueError)         400
        ├── Unauthorized (PermissionError)  401
        ├── Forbidden (PermissionError)     403
        ├── NotFound (LookupError)          404
        ├── Conflict                        409 (the state changed under the request)
        ├── Gone                            410 (a retired endpoint)
        ├── TooManyRequests                 429, with Retry-After
        └── ServiceUnavailable              503

Third-party exceptions (web3, httpx, SQLAlchemy) are caught at the boundary and re-raised as
one of these with `raise ... from exc`.

A leaf, so any package may raise these: standard library only (of Crossfill, `types` at most).
What a revert said (`RevertReason`, carried by `Reverted`) lives here for that reason;
`contracts.reverts` decodes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


class CrossfillError(Exception):
    """Root of every error Crossfill raises on purpose."""


class ConfigError(CrossfillError, ValueError):
    """The deployment file or the settings are invalid."""


class SecretError(ConfigError):
    """A key reference cannot be resolved, or is not allowed in this mode."""


class ToolchainMissing(CrossfillError, RuntimeError):
    """A tool installed by `make deps` (npm packages, compiled artifacts) is missing."""


class ContractBuildError(CrossfillError, RuntimeError):
    """The Solidity compiler rejected the sources."""


class DevnetError(CrossfillError, RuntimeError):
    """Starting or seeding the local devnet failed."""


class ChainError(CrossfillError):
    """An RPC call failed or returned something unexpected."""


class ChainUnreachable(ChainError, ConnectionError):
    """The chain's RPC endpoint did not answer."""


class RateLimited(ChainUnreachable):
    """The chain's RPC endpoint answered 429; `retry_after_seconds` when it said how long."""

    def __init__(self, message: str, *, retry_after_seconds: float | None) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class NodeBehind(ChainError):
    """The node that answered has not reached a block we asked about (a lagging node behind a
    load balancer): its answer proves nothing about that block, so nothing may advance on it."""

    def __init__(self, message: str, *, block_number: int) -> None:
        super().__init__(message)
        self.block_number = block_number


class LogsRefused(ChainError):
    """The node answered a log query with an error instead of logs: providers cap the blocks
    or the results one `eth_getLogs` may cover, and a smaller range may pass."""


class BatchRefused(ChainError):
    """The endpoint refused a JSON-RPC batch as a whole, not any call in it: some providers take
    no batches, or none as large. The chain clients then send the calls one by one."""


class SendRefused(ChainError):
    """The node refused a signed transaction (`eth_sendRawTransaction` answered an error, not
    the transport); the subclasses name the refusals the transaction manager acts on."""


class AlreadyKnown(SendRefused):
    """The node has this very transaction already (in its pool): sent, no failure."""


class NonceTooLow(SendRefused):
    """The sender's nonce has passed this transaction's: it was mined already, or another
    transaction took its nonce."""


class CannotPayGas(SendRefused):
    """The sender's balance cannot pay this transaction's value and gas at its fee."""


class InsufficientFunds(ChainError):
    """A transaction its sender cannot pay for (its value plus its gas at the offered fee,
    beyond what the sender's transactions still in flight may take), so it was not signed:
    a node would refuse it and every later transaction of the key would wait behind its
    nonce. `shortfall` is what is missing, in the chain's gas currency's smallest unit."""

    def __init__(self, message: str, *, shortfall: int) -> None:
        super().__init__(message)
        self.shortfall = shortfall


@dataclass(frozen=True)
class RevertReason:
    """A decoded revert: the error's name and arguments; `name` is "" when the data matches no
    known error (or there was none). Decoded by `contracts.reverts`."""

    name: str
    args: tuple[Any, ...] = ()

    @property
    def message(self) -> str:
        """`Error(string)`'s text, else the error's name and arguments."""
        if self.name == "Error" and self.args:
            return str(self.args[0])
        if not self.name:
            return "reverted without a known reason"
        shown = ", ".join(
            "0x" + arg.hex() if isinstance(arg, bytes) else str(arg) for arg in self.args
        )
        return f"{self.name}({shown})"


class Reverted(ChainError):
    """The contract itself refused the call (simulated or mined), with its revert data.

    Of every chain failure, only this one may refuse or refund an order: the rest say nothing
    about the order and are retried.
    """

    def __init__(self, message: str, *, data: bytes, reason: RevertReason) -> None:
        super().__init__(message)
        self.data = data
        self.reason = reason


class ProgramFailed(ChainError):
    """An SVM program refused the transaction (simulated, or landed with an error).

    The SVM twin of `Reverted`: of every SVM chain failure only this one may refuse or refund
    an order. `err` is the node's error value ({"InstructionError": [index, {"Custom": n}]}).
    """

    def __init__(self, message: str, *, err: object, logs: tuple[str, ...]) -> None:
        super().__init__(message)
        self.err = err
        self.logs = logs


class ChainNotFound(ChainError):
    """The SVM node does not know the transaction or account asked about (yet)."""


class ActionRefused(ChainError):
    """The perps exchange answered `{"status": "err"}` to a signed action; `message` is its
    own words ("Insufficient balance for transfer", "Invalid nonce: duplicate nonce")."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StoreError(CrossfillError):
    """The database failed or is not at the expected schema revision."""


class SignerBusy(CrossfillError):
    """Another process holds the lease of this signing key on this chain (one writer at a
    time); nothing was signed or sent, try again later."""


class ApiError(CrossfillError):
    """An error answered to an API client in the spec's error shape."""

    status_code = 500
    error_code: str | None = None

    def __init__(self, message: str, *, error_code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if error_code is not None:
            self.error_code = error_code

    def headers(self) -> dict[str, str]:
        return {}

    def body(self) -> dict[str, object]:
        body: dict[str, object] = {"message": self.message, "statusCode": self.status_code}
        if self.error_code is not None:
            body["errorCode"] = self.error_code
        return body


class BadRequest(ApiError, ValueError):
    status_code = 400


class NotFound(ApiError, LookupError):
    status_code = 404


class Conflict(ApiError):
    status_code = 409


class Unprocessable(ApiError):
    """Well-formed, but not something the service can do (the OIF paths' 422)."""

    status_code = 422


class ServiceUnavailable(ApiError):
    status_code = 503
    error_code = "SERVICE_UNAVAILABLE"


class Unauthorized(ApiError, PermissionError):
    status_code = 401
    error_code = "UNAUTHORIZED"


class Forbidden(ApiError, PermissionError):
    status_code = 403


class Gone(ApiError):
    status_code = 410


class TooManyRequests(ApiError):
    status_code = 429

    def __init__(self, message: str, *, retry_after_seconds: float) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(max(1, math.ceil(self.retry_after_seconds)))}
