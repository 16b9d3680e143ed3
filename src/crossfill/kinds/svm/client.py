"""The SVM chain port and its JSON-RPC client.

Every call answers or raises a typed outcome (`crossfill.errors`): `ProgramFailed` (a program
refused the transaction: the only outcome that may refuse or refund an order),
`ChainUnreachable`, `RateLimited`, `ChainNotFound`, or another `ChainError` (the node
answered something unusable). The HTTP transport is injectable (`httpx.MockTransport` in
unit tests).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal, Protocol

from solders.hash import Hash
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from crossfill.chains.batching import Batching
from crossfill.chains.json_http import JsonOverHttp
from crossfill.errors import (
    BatchRefused,
    ChainError,
    ChainNotFound,
    ProgramFailed,
)
from crossfill.kinds.svm.programs import TOKEN_ACCOUNT_SIZE, TOKEN_PROGRAM_ID, token_account
from crossfill.types import ChainId

PREFLIGHT_FAILURE: Final = -32002
# Token accounts the node does not know answer this (getTokenAccountBalance).
INVALID_PARAMS: Final = -32602

Commitment = Literal["processed", "confirmed", "finalized"]


@dataclass(frozen=True)
class Blockhash:
    blockhash: Hash
    last_valid_block_height: int


@dataclass(frozen=True)
class SignatureStatus:
    slot: int
    err: object
    commitment: Commitment

    @property
    def succeeded(self) -> bool:
        return self.err is None


@dataclass(frozen=True)
class LandedTransaction:
    """What a landed transaction cost and when, as the chain recorded it: its slot, its
    block's time (None when the node kept none) and the fee it paid, in lamports; and what its
    fee payer's SOL balance fell by (fee, SOL it sent, rent of accounts it opened), when the
    answer shows its balances."""

    slot: int
    block_time: int | None
    fee: int
    payer_spent: int | None = field(default=None, compare=False)


def landed_of(answer: dict[str, Any]) -> LandedTransaction:
    """The `LandedTransaction` of a `getTransaction` answer."""
    block_time = answer.get("blockTime")
    meta = answer.get("meta") or {}
    return LandedTransaction(
        slot=int(answer["slot"]),
        block_time=None if block_time is None else int(block_time),
        fee=int(meta.get("fee") or 0),
        payer_spent=_payer_spent(meta),
    )


def _payer_spent(meta: dict[str, Any]) -> int | None:
    """The fee payer's (the first account's) SOL balance before less after."""
    before, after = meta.get("preBalances"), meta.get("postBalances")
    if not isinstance(before, list) or not isinstance(after, list) or not before or not after:
        return None
    return int(before[0]) - int(after[0])


@dataclass(frozen=True)
class OwnedTokenAccount:
    """An SPL Token account and the mint it holds."""

    address: Pubkey
    mint: Pubkey


class BlockhashNotFound(ChainError):
    """The node refused a transaction whose blockhash it does not know (expired or too new):
    nothing landed; whether it can still land is for `block_height` to say."""


class SvmPort(Protocol):
    chain_id: ChainId

    async def block_height(self) -> int: ...

    async def genesis_hash(self) -> str: ...

    async def health(self) -> None:
        """ChainError unless the node says it is healthy (a node behind the cluster says not)."""

    async def latest_blockhash(self) -> Blockhash: ...

    async def balance(self, address: Pubkey) -> int: ...

    async def token_balance(self, owner: Pubkey, mint: Pubkey) -> int: ...

    async def account_exists(self, address: Pubkey) -> bool:
        """Whether the account holds anything (lamports) at all."""

    async def token_accounts_of(self, owner: Pubkey) -> list[OwnedTokenAccount]:
        """Every SPL Token account `owner` owns, as the chain lists them."""

    async def send(self, tx: VersionedTransaction, *, preflight: bool = True) -> str:
        """With preflight: `ProgramFailed` when a program refuses, `BlockhashNotFound`.
        A transaction that already landed answers its signature."""

    async def signature_status(self, signature: str) -> SignatureStatus | None: ...

    async def transaction(self, signature: str) -> dict[str, Any]: ...

    async def landed_transaction(self, signature: str) -> LandedTransaction:
        """The landed transaction's slot, block time and fee (`ChainNotFound` if unknown)."""

    async def signatures_for(
        self, address: Pubkey, *, until: str | None, limit: int, before: str | None = None
    ) -> list[dict[str, Any]]:
        """Newest first, those listed after `before` (older than it) and newer than `until`."""

    async def signatures_for_each(
        self, queries: Sequence[tuple[Pubkey, str | None]], *, limit: int
    ) -> list[list[dict[str, Any]]]:
        """`signatures_for` each (address, until), in order, in one round trip."""

    async def close(self) -> None: ...


class SvmClient(JsonOverHttp):
    """`SvmPort` over a node's JSON-RPC."""

    service = "the node"
    _next_id = 0

    @cached_property
    def batching(self) -> Batching:
        """Some providers refuse JSON-RPC batches: after a refusal, calls go one by one."""
        return Batching()

    def _body(self, method: str, params: Sequence[Any]) -> dict[str, Any]:
        self._next_id += 1
        return {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": list(params)}

    async def _call(self, method: str, *params: Any) -> Any:
        answer = await self._post(method, self._body(method, params))
        if not isinstance(answer, dict):
            raise ChainError(f"{method}: the node answered no JSON-RPC object")
        return _result(method, answer)

    async def _calls(self, method: str, each_params: Sequence[Sequence[Any]]) -> list[Any]:
        """One JSON-RPC batch of `method` calls; their results in order (the first error
        raised, as `_call` would)."""
        bodies = [self._body(method, params) for params in each_params]
        if not bodies:
            return []
        answers = await self._post(method, bodies)
        if not isinstance(answers, list):
            raise BatchRefused(f"{method}: the node answered no JSON-RPC batch")
        if not all(isinstance(a, dict) for a in answers):
            raise ChainError(f"{method}: the node answered no JSON-RPC batch")
        by_id = {answer.get("id"): answer for answer in answers}
        if any(body["id"] not in by_id for body in bodies):
            raise ChainError(f"{method}: the node's batch answer misses a call")
        return [_result(method, by_id[body["id"]]) for body in bodies]

    async def _post(self, method: str, body: Any) -> Any:
        return await self._post_json(self._url, body, method)

    async def block_height(self) -> int:
        height: int = await self._call("getBlockHeight", {"commitment": "confirmed"})
        return height

    async def genesis_hash(self) -> str:
        genesis: str = await self._call("getGenesisHash")
        return genesis

    async def health(self) -> None:
        # A node behind answers an error (-32005, "Node is behind by N slots"): ChainError.
        answer = await self._call("getHealth")
        if answer != "ok":
            raise ChainError(f"getHealth: the node answered {str(answer)[:100]!r}")

    async def latest_blockhash(self) -> Blockhash:
        value = (await self._call("getLatestBlockhash", {"commitment": "confirmed"}))["value"]
        return Blockhash(Hash.from_string(value["blockhash"]), int(value["lastValidBlockHeight"]))

    async def balance(self, address: Pubkey) -> int:
        """At `confirmed`, as deposits and payments are read."""
        answer = await self._call("getBalance", str(address), {"commitment": "confirmed"})
        return int(answer["value"])

    async def account_exists(self, address: Pubkey) -> bool:
        answer = await self._call("getAccountInfo", str(address), {"encoding": "base64"})
        return answer["value"] is not None

    async def token_accounts_of(self, owner: Pubkey) -> list[OwnedTokenAccount]:
        answer = await self._call(
            "getTokenAccountsByOwner",
            str(owner),
            {"programId": str(TOKEN_PROGRAM_ID)},
            {"encoding": "base64", "commitment": "confirmed"},
        )
        try:
            return [_owned_token_account(listed) for listed in answer["value"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ChainError(f"getTokenAccountsByOwner: an unusable answer ({exc})") from exc

    async def token_balance(self, owner: Pubkey, mint: Pubkey) -> int:
        """The owner's associated token account balance; 0 when it has none."""
        try:
            answer = await self._call(
                "getTokenAccountBalance",
                str(token_account(owner, mint)),
                {"commitment": "confirmed"},
            )
        except RpcError as exc:
            if exc.code == INVALID_PARAMS:  # no such token account: nothing held
                return 0
            raise
        return int(answer["value"]["amount"])

    async def send(self, tx: VersionedTransaction, *, preflight: bool = True) -> str:
        encoded = base64.b64encode(bytes(tx)).decode()
        config = {
            "encoding": "base64",
            "preflightCommitment": "confirmed",
            "skipPreflight": not preflight,
        }
        try:
            signature: str = await self._call("sendTransaction", encoded, config)
        except ProgramFailed as failed:
            # A validator's preflight of a transaction that already landed says so: sent.
            if failed.err == "AlreadyProcessed":
                return str(tx.signatures[0])
            raise
        return signature

    async def signature_status(self, signature: str) -> SignatureStatus | None:
        answer = await self._call(
            "getSignatureStatuses", [signature], {"searchTransactionHistory": True}
        )
        found = answer["value"][0]
        if found is None:
            return None
        return SignatureStatus(found["slot"], found["err"], found["confirmationStatus"])

    async def transaction(self, signature: str) -> dict[str, Any]:
        found = await self._call(
            "getTransaction", signature, {"encoding": "json", "commitment": "confirmed",
                                          "maxSupportedTransactionVersion": 0},
        )  # fmt: skip
        if found is None:
            raise ChainNotFound(f"transaction {signature} is unknown to the node")
        result: dict[str, Any] = found
        return result

    async def landed_transaction(self, signature: str) -> LandedTransaction:
        return landed_of(await self.transaction(signature))

    async def signatures_for(
        self, address: Pubkey, *, until: str | None, limit: int, before: str | None = None
    ) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = await self._call(
            "getSignaturesForAddress", *_listing(address, until, limit, before)
        )
        return listed

    async def signatures_for_each(
        self, queries: Sequence[tuple[Pubkey, str | None]], *, limit: int
    ) -> list[list[dict[str, Any]]]:
        if self.batching.allowed():
            try:
                listed: list[list[dict[str, Any]]] = await self._calls(
                    "getSignaturesForAddress",
                    [_listing(address, until, limit) for address, until in queries],
                )
                return listed
            except BatchRefused as refusal:
                self.batching.note(refusal, chain_id=self.chain_id)
        return [
            await self.signatures_for(address, until=until, limit=limit)
            for address, until in queries
        ]


def _listing(
    address: Pubkey, until: str | None, limit: int, before: str | None = None
) -> tuple[str, dict[str, Any]]:
    config: dict[str, Any] = {"limit": limit, "commitment": "confirmed"}
    if until is not None:
        config["until"] = until
    if before is not None:
        config["before"] = before
    return str(address), config


def _owned_token_account(listed: dict[str, Any]) -> OwnedTokenAccount:
    """One entry of a getTokenAccountsByOwner answer (base64): a token account's data starts
    with its mint."""
    encoded, encoding = listed["account"]["data"]
    data = base64.b64decode(encoded)
    if encoding != "base64" or len(data) != TOKEN_ACCOUNT_SIZE:
        raise ValueError(f"{listed['pubkey']} is no token account in base64")
    return OwnedTokenAccount(Pubkey.from_string(listed["pubkey"]), Pubkey.from_bytes(data[:32]))


def _result(method: str, answer: dict[str, Any]) -> Any:
    if "error" in answer:
        raise _outcome(method, answer["error"])
    return answer.get("result")


class RpcError(ChainError):
    """A JSON-RPC error the node answered that is no outcome of its own."""

    def __init__(self, message: str, *, code: int) -> None:
        super().__init__(message)
        self.code = code


def _outcome(method: str, error: Any) -> ChainError:
    code = error.get("code") if isinstance(error, dict) else None
    message = str(error.get("message", "")) if isinstance(error, dict) else str(error)
    data = error.get("data") if isinstance(error, dict) else None
    if code == PREFLIGHT_FAILURE and isinstance(data, dict):
        if data.get("err") == "BlockhashNotFound":
            return BlockhashNotFound(f"{method}: blockhash not found")
        if data.get("err") is not None:
            return ProgramFailed(
                f"{method}: {message}", err=data["err"], logs=tuple(data.get("logs") or ())
            )
    return RpcError(f"{method}: {message}", code=code if isinstance(code, int) else 0)
