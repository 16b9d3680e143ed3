"""`IntentsApiBridge`: another intents service speaking this interface, used as a bridge by the
solver as an ordinary user would use it, through its public HTTP interface only (the Python
client, `crossfill_client`), against a configured base URL (`[rebalancing] bridge_url`).

The solver asks it for a quote from itself on the origin chain to itself on the destination,
sends the quote's transactions with its own key through the origin chain's transaction manager
(each journalled under the purpose `bridge:<request id>:<step>` before it is broadcast: sending
the same quote again resumes, and never signs a second transaction for a step), and follows
the request's status on the bridge. It never reads the other service's database.

What is final: a refusal the bridge states (a 4xx answer, with its `errorCode`) and a revert
of one of our transactions. What is retried: the bridge's 5xx and 429 and a connection that
fails (by the client's retry policy), and a chain call that fails (here, with backoff); past
the tries, `Unavailable`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import structlog
from eth_utils.address import to_checksum_address

from crossfill.config import RebalancingSettings
from crossfill.contracts import calldata
from crossfill.domain.backoff import Backoff
from crossfill.domain.gas import with_gas_headroom
from crossfill.errors import ChainError, Reverted, SignerBusy
from crossfill.kinds.evm.txmanager import Mined, TxManager
from crossfill.treasury.bridge import (
    Arrived,
    BridgeCall,
    BridgeQuote,
    Failed,
    Move,
    MoveStatus,
    Pending,
    QuoteOutcome,
    Refunded,
    Refused,
    SendOutcome,
    SentMove,
    Unavailable,
)
from crossfill_client import (
    ApiError,
    AsyncClient,
    ClientError,
    QuoteRequest,
    RequestStatus,
    RetryPolicy,
)
from crossfill_client.models import Quote, StatusRecord
from crossfill_client.models.quote import EvmTransactionData

PURPOSE = "bridge"
# How often `send` asks whether a step it waits on was mined.
MINED_POLL_SECONDS = 0.5

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class _Mined:
    tx_hash: str


@dataclass(frozen=True)
class _Broadcast:
    tx_hash: str


@dataclass(frozen=True)
class _Failing:
    """A chain call failed (or the signer lease is another process's): try again."""

    reason: str


def step_purpose(request_id: str, index: int) -> str:
    """The journal purpose of a quote's `index`th transaction."""
    return f"{PURPOSE}:{request_id}:{index}"


def client_retry(settings: RebalancingSettings) -> RetryPolicy:
    """The client's policy for the bridge's 5xx, 429 and broken connections."""
    return RetryPolicy(
        attempts=settings.bridge_attempts,
        backoff_base=settings.bridge_backoff_seconds,
        backoff_max=settings.bridge_backoff_max_seconds,
    )


def stated_refusal(error: ApiError) -> bool:
    """Whether an error answer is the bridge's own refusal (a 4xx but 429), which is final;
    anything else may pass."""
    return 400 <= error.status_code < 500 and error.status_code != 429


def quote_refusal(error: ClientError) -> Refused | Unavailable:
    if isinstance(error, ApiError) and stated_refusal(error):
        return Refused("bridge", error.message, getattr(error, "error_code", None))
    return Unavailable(f"the bridge did not answer the quote: {error}")


def offer(move: Move, quote: Quote, solver: str) -> BridgeQuote | Refused:
    """The bridge's quote as a `BridgeQuote`; refused when it is not one the solver can carry
    out alone on the origin chain (a signature to post, a transaction elsewhere or from
    another sender) or does not pay the solver."""
    calls: list[BridgeCall] = []
    for step in quote.steps:
        for item in step.items:
            data = item.data
            if not isinstance(data, EvmTransactionData) or data.chain_id != move.origin_chain_id:
                return Refused("bridge", f"step {step.id} is not a transaction on the origin")
            if data.from_ is not None and data.from_.lower() != solver.lower():
                return Refused("bridge", f"step {step.id} is for another sender")
            calls.append(
                BridgeCall(
                    data.to, bytes.fromhex(data.data.removeprefix("0x")), data.value, data.gas
                )
            )
    if not calls:
        return Refused("bridge", "the quote has no transaction to send")
    if quote.details.recipient.lower() != solver.lower():
        return Refused("bridge", "the quote pays someone else than the solver")
    return BridgeQuote(move, quote.request_id, quote.details.currency_out.amount, tuple(calls))


def status_of(record: StatusRecord, quote: BridgeQuote) -> MoveStatus:
    """What the bridge's status record says of a sent move."""
    match record.status:
        case RequestStatus.SUCCESS:
            return Arrived(quote.amount_out, record.tx_hashes)
        case RequestStatus.REFUND:
            return Refunded(record.tx_hashes)
        case RequestStatus.FAILURE:
            return Failed(f"the bridge failed the request: {record.fail_reason or 'no reason'}")
        case _:
            return Pending("bridge", f"the bridge's request is {record.status.value}")


def status_unknown(error: ClientError) -> MoveStatus:
    """The bridge could not say: still pending, unless it stated it does not know the request."""
    if isinstance(error, ApiError) and stated_refusal(error):
        return Failed(f"the bridge refused the status: {error.message}")
    return Pending("unknown", f"the bridge did not answer: {error}")


@dataclass
class IntentsApiBridge:
    """The bridge at `client`'s base URL; the solver's transactions sent through `senders`
    (origin chain id → the solver key's transaction manager there, shared with the key's other
    workers so their nonces never collide)."""

    client: AsyncClient
    senders: Mapping[int, TxManager]
    solver: str
    settings: RebalancingSettings
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def configured(
        cls, settings: RebalancingSettings, senders: Mapping[int, TxManager], solver: str
    ) -> IntentsApiBridge | None:
        """The bridge of the deployment's `[rebalancing]` section; None without `bridge_url`."""
        if settings.bridge_url is None:
            return None
        client = AsyncClient(
            settings.bridge_url,
            timeout=settings.bridge_timeout_seconds,
            retry=client_retry(settings),
        )
        return cls(client, senders, solver, settings)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def quote(self, move: Move) -> QuoteOutcome:
        solver = to_checksum_address(self.solver)
        request = QuoteRequest(
            user=solver,
            recipient=solver,
            refund_to=solver,
            origin_chain_id=move.origin_chain_id,
            destination_chain_id=move.destination_chain_id,
            origin_currency=move.currency_in,
            destination_currency=move.currency_out,
            amount=move.amount,
            trade_type="EXACT_INPUT",
        )
        try:
            answer = await self.client.quote(request)
        except ClientError as error:
            return quote_refusal(error)
        return offer(move, answer, solver)

    async def send(self, quote: BridgeQuote) -> SendOutcome:
        sender = self.senders.get(quote.move.origin_chain_id)
        if sender is None:
            return Refused("chain", f"the solver signs on no chain {quote.move.origin_chain_id}")
        hashes: list[str] = []
        for index, call in enumerate(quote.calls):
            last = index == len(quote.calls) - 1
            sent = await self._step(sender, call, step_purpose(quote.request_id, index), last)
            if not isinstance(sent, str):
                return sent
            hashes.append(sent)
        return SentMove(quote, tuple(hashes))

    async def status(self, sent: SentMove) -> MoveStatus:
        quote = sent.quote
        sender = self.senders.get(quote.move.origin_chain_id)
        if sender is None:
            return Pending("unknown", f"the solver signs on no chain {quote.move.origin_chain_id}")
        for index in range(len(quote.calls)):
            try:
                attempt = await sender.attempt(None, step_purpose(quote.request_id, index))
            except ChainError as error:
                return Pending("unknown", f"the origin chain did not answer: {error}")
            if isinstance(attempt, Mined) and not attempt.succeeded:
                return Failed(f"transaction {attempt.row.tx_hash} reverted on the origin")
            if not isinstance(attempt, Mined):
                return Pending("origin", f"step {index} is not mined yet")
        try:
            record = await self.client.status(quote.request_id)
        except ClientError as error:
            return status_unknown(error)
        return status_of(record, quote)

    async def _step(
        self, sender: TxManager, call: BridgeCall, purpose: str, last: bool
    ) -> str | Refused | Unavailable:
        """The step journalled and broadcast (resumed when it was already: never signed twice);
        unless it is the `last`, waited for until mined. Its transaction hash, or why not.

        A chain call that fails (or a signer lease held elsewhere) is tried again with backoff,
        from the journal each time: a transaction journalled before its broadcast failed is
        sent again, the same bytes, never signed anew."""
        deadline = self.clock() + self.settings.bridge_step_timeout_seconds
        backoff = Backoff(
            base_seconds=self.settings.bridge_backoff_seconds,
            cap_seconds=self.settings.bridge_backoff_max_seconds,
        )
        while True:
            progress = await self._progress(sender, call, purpose)
            if isinstance(progress, _Failing):
                if backoff.failures + 1 >= self.settings.bridge_attempts:
                    return Unavailable(f"the origin chain: {progress.reason}")
                await self.sleep(backoff.failed())
                continue
            if isinstance(progress, _Mined):
                return progress.tx_hash
            if not isinstance(progress, _Broadcast):
                return progress
            if last:
                return progress.tx_hash
            if self.clock() > deadline:
                return Unavailable(f"{progress.tx_hash} not mined within the step timeout")
            await self.sleep(MINED_POLL_SECONDS)

    async def _progress(
        self, sender: TxManager, call: BridgeCall, purpose: str
    ) -> _Mined | _Broadcast | _Failing | Refused:
        """Where the step is: mined, or broadcast now (signed here if nothing was journalled
        for it; sent again, the same bytes, if journalled and never acknowledged by a node)."""
        try:
            attempt = await sender.attempt(None, purpose)
            if isinstance(attempt, Mined):
                if attempt.succeeded:
                    return _Mined(attempt.row.tx_hash)
                return Refused("chain", f"transaction {attempt.row.tx_hash} reverted")
            if attempt is None:
                return await self._sign(sender, call, purpose)
            if attempt.row.status == "signed":  # journalled, never acknowledged (a crash)
                await sender.send_again(attempt.row)
                log.warning("bridge step sent again", purpose=purpose, tx_hash=attempt.row.tx_hash)
            return _Broadcast(attempt.row.tx_hash)
        except Reverted as revert:
            return Refused("chain", f"the origin refuses the step: {revert.reason.message}")
        except (ChainError, SignerBusy) as error:
            return _Failing(str(error))

    async def _sign(self, sender: TxManager, call: BridgeCall, purpose: str) -> _Broadcast:
        """A new transaction for the step, gas estimated unless the bridge gave it: signed,
        journalled and broadcast (`Reverted` when the estimate reverts, another ChainError when
        a call fails)."""
        gas = call.gas or await sender.client.estimate_gas(
            {
                "from": sender.account.address,
                "to": to_checksum_address(call.to),
                "data": calldata.hex_data(call.data),
                "value": call.value,
            }
        )
        row = await sender.send(
            to=call.to,
            data=call.data,
            value=call.value,
            gas_limit=with_gas_headroom(gas),
            purpose=purpose,
            request_id=None,
        )
        log.info("bridge step sent", purpose=purpose, tx_hash=row.tx_hash, nonce=row.nonce)
        return _Broadcast(row.tx_hash)
