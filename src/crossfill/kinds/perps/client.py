"""The perps exchange port and its HTTP client (`POST /exchange`, `POST /info`).

The same client talks to the real exchange (the deployment's `[perps].api_url`) and to the
devnet one. Every call answers or raises a typed outcome (`crossfill.errors`), as the chain
ports do: `ActionRefused` (the exchange refused a signed action, with its message: the only
outcome that says anything about the action itself), `ChainUnreachable` (connection refused,
timeout, HTTP 5xx), `RateLimited` (HTTP 429), or another `ChainError` (an answer that cannot be
read). The HTTP transport is injectable (`httpx.MockTransport` in unit tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from crossfill.chains.json_http import JsonOverHttp
from crossfill.errors import ActionRefused, ChainError
from crossfill.kinds.perps.actions import SignedAction
from crossfill.types import ChainId


@dataclass(frozen=True)
class ActionAccepted:
    """The exchange took the action (`{"status": "ok"}`)."""

    nonce: int


@dataclass(frozen=True)
class ClearinghouseState:
    """The perps account: `withdrawable` and the margin summary's account value, in USD."""

    withdrawable: Decimal
    account_value: Decimal


@dataclass(frozen=True)
class SpotBalance:
    coin: str
    token: int
    total: Decimal
    hold: Decimal


@dataclass(frozen=True)
class SpotTokenMeta:
    name: str
    index: int
    token_id: str
    sz_decimals: int
    wei_decimals: int


@dataclass(frozen=True)
class Transfer:
    """A transfer in the ledger: `usdSend` (kind `internalTransfer`, token USDC), `spotSend`
    (`spotTransfer`, from and to the spot DEX) or `sendAsset` (`send`). `nonce` is the signed
    action's, when shown."""

    kind: str
    user: str
    destination: str
    token: str
    amount: Decimal
    nonce: int | None
    source_dex: str = ""
    destination_dex: str = ""
    # What the exchange charged the sender for it, in USDC (`fee`; 0 when not shown).
    fee: Decimal = Decimal(0)


@dataclass(frozen=True)
class OtherDelta:
    """A ledger update that is no transfer between accounts (a bridge deposit, ...)."""

    kind: str


@dataclass(frozen=True)
class LedgerUpdate:
    time: int
    hash: str
    delta: Transfer | OtherDelta


@dataclass
class PerpsState:
    """What `/chains` shows of the exchange: its last read's failure, if the last failed.
    An exchange has no blocks, so it never lags."""

    chain_id: ChainId
    last_error: str | None = None
    # What the solver's account holds of its fee currency (`[perps.key_gas]`), as last read
    # (`kinds.perps.fee_watch`); None before the first read.
    fee_balance: int | None = None

    def lagging(self, _now: float) -> bool:
        return False


class PerpsPort(Protocol):
    chain_id: ChainId

    async def post_action(self, signed: SignedAction) -> ActionAccepted:
        """`ActionRefused` with the exchange's message when it refuses."""

    async def clearinghouse_state(self, user: str) -> ClearinghouseState: ...

    async def spot_balances(self, user: str) -> list[SpotBalance]: ...

    async def spot_meta(self) -> list[SpotTokenMeta]: ...

    async def ledger_updates(
        self, user: str, *, start_ms: int, end_ms: int | None = None
    ) -> list[LedgerUpdate]: ...

    async def close(self) -> None: ...


class PerpsClient(JsonOverHttp):
    """`PerpsPort` over the exchange's HTTP API."""

    service = "the exchange"
    answers_only_with_200 = True

    async def _post(self, path: str, body: dict[str, Any], what: str) -> Any:
        return await self._post_json(f"{self._url.rstrip('/')}{path}", body, what)

    async def post_action(self, signed: SignedAction) -> ActionAccepted:
        answer = await self._post("/exchange", signed.request_body(), signed.action.kind)
        if not isinstance(answer, dict):
            raise ChainError(f"{signed.action.kind}: unexpected answer")
        if answer.get("status") == "ok":
            return ActionAccepted(signed.nonce)
        if answer.get("status") == "err":
            raise ActionRefused(str(answer.get("response", "")))
        raise ChainError(f"{signed.action.kind}: unexpected status {answer.get('status')!r}")

    async def _info(self, body: dict[str, Any]) -> Any:
        return await self._post("/info", body, str(body["type"]))

    async def clearinghouse_state(self, user: str) -> ClearinghouseState:
        answer = await self._info({"type": "clearinghouseState", "user": user})
        try:
            return ClearinghouseState(
                withdrawable=_decimal(answer["withdrawable"]),
                account_value=_decimal(answer["marginSummary"]["accountValue"]),
            )
        except (KeyError, TypeError) as exc:
            raise ChainError("clearinghouseState: unexpected answer") from exc

    async def spot_balances(self, user: str) -> list[SpotBalance]:
        answer = await self._info({"type": "spotClearinghouseState", "user": user})
        try:
            return [
                SpotBalance(
                    coin=str(b["coin"]),
                    token=int(b["token"]),
                    total=_decimal(b["total"]),
                    hold=_decimal(b["hold"]),
                )
                for b in answer["balances"]
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise ChainError("spotClearinghouseState: unexpected answer") from exc

    async def spot_meta(self) -> list[SpotTokenMeta]:
        answer = await self._info({"type": "spotMeta"})
        try:
            return [
                SpotTokenMeta(
                    name=str(t["name"]),
                    index=int(t["index"]),
                    token_id=str(t["tokenId"]),
                    sz_decimals=int(t["szDecimals"]),
                    wei_decimals=int(t["weiDecimals"]),
                )
                for t in answer["tokens"]
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise ChainError("spotMeta: unexpected answer") from exc

    async def ledger_updates(
        self, user: str, *, start_ms: int, end_ms: int | None = None
    ) -> list[LedgerUpdate]:
        body: dict[str, Any] = {
            "type": "userNonFundingLedgerUpdates",
            "user": user,
            "startTime": start_ms,
        }
        if end_ms is not None:
            body["endTime"] = end_ms
        answer = await self._info(body)
        try:
            return [
                LedgerUpdate(int(u["time"]), str(u["hash"]), delta_of(u["delta"])) for u in answer
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise ChainError("userNonFundingLedgerUpdates: unexpected answer") from exc


def _decimal(value: object) -> Decimal:
    try:
        return Decimal(str(value))
    except InvalidOperation as exc:
        raise ValueError(f"not a decimal: {value!r}") from exc


def delta_of(delta: dict[str, Any]) -> Transfer | OtherDelta:
    """A ledger update's `delta` in its typed form."""
    kind = str(delta["type"])
    if kind not in ("internalTransfer", "spotTransfer", "send"):
        return OtherDelta(kind)
    nonce = delta.get("nonce")
    # A `spotSend` moves spot balances; its entry names no DEX, so the spot DEX is both sides.
    dex = "spot" if kind == "spotTransfer" else ""
    return Transfer(
        kind=kind,
        user=str(delta["user"]),
        destination=str(delta["destination"]),
        token="USDC" if kind == "internalTransfer" else str(delta["token"]),
        amount=_decimal(delta["usdc"] if kind == "internalTransfer" else delta["amount"]),
        nonce=int(nonce) if isinstance(nonce, int) else None,
        source_dex=str(delta.get("sourceDex", dex)),
        destination_dex=str(delta.get("destinationDex", dex)),
        fee=_decimal(delta.get("fee") or 0),
    )
