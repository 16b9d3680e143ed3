"""The loop over a quote's steps, in order: each item carried out by its kind, its deposit
hinted to the service, and its check followed to the request's end."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from crossfill_client._execution.evm import send_evm_transaction, wait_for_receipt
from crossfill_client._execution.exchange import post_action, signed_action_body
from crossfill_client._execution.signatures import sign_and_post
from crossfill_client._execution.svm import send_svm_transaction, wait_for_signature
from crossfill_client._http import ServiceHttp
from crossfill_client._rpc import JsonRpc
from crossfill_client._waiting import WaitOptions, wait_for_request
from crossfill_client.errors import ApiError, ExecutionError, RequestFailed, TransportError
from crossfill_client.models.quote import (
    EvmTransactionData,
    ExchangeActionData,
    Quote,
    SignatureData,
    Step,
    StepItem,
    SvmTransactionData,
)
from crossfill_client.models.status import StatusRecord
from crossfill_client.progress import (
    ExchangeActionPosted,
    ProgressCallback,
    ProgressEvent,
    SignaturePosted,
    StatusChanged,
    StepCompleted,
    StepStarted,
    TransactionConfirmed,
    TransactionSubmitted,
)
from crossfill_client.signers import EvmSigner, Signer, SvmSigner


@dataclass(frozen=True)
class ExecutionOptions:
    """`wait`: how a step's check is followed; `wait_for_fill`: follow each item's check to
    the request's end (else return once every step is sent); `confirmation_timeout`: seconds
    a transaction may take to land, asked after every `confirmation_interval`;
    `exchange_signature_chain_id`: the chain id exchange actions are signed on, instead of
    the item's."""

    wait: WaitOptions = field(default_factory=WaitOptions)
    wait_for_fill: bool = True
    confirmation_timeout: float = 120.0
    confirmation_interval: float = 0.5
    exchange_signature_chain_id: int | None = None


@dataclass(frozen=True)
class SentTransaction:
    step_id: str
    chain_id: int
    tx_id: str


@dataclass(frozen=True)
class ExecutionResult:
    """What `execute` did: the transactions it sent, and each followed request's final status
    record (empty when it did not wait)."""

    request_ids: tuple[str, ...]
    transactions: tuple[SentTransaction, ...]
    statuses: Mapping[str, StatusRecord] = field(default_factory=dict)

    @property
    def status(self) -> StatusRecord | None:
        """The final status of the quote's (first) request, when it was followed."""
        return self.statuses.get(self.request_ids[0]) if self.request_ids else None


class StepRunner:
    """Carries out one quote for one signer."""

    def __init__(
        self,
        service: ServiceHttp,
        chain_http: httpx.AsyncClient,
        signer: Signer,
        rpc_urls: Mapping[int, str],
        options: ExecutionOptions,
        on_progress: ProgressCallback | None,
    ) -> None:
        self.service, self.chain_http, self.rpc_urls = service, chain_http, rpc_urls
        self.signer, self.options, self.on_progress = signer, options, on_progress
        self.sent: list[SentTransaction] = []
        self.statuses: dict[str, StatusRecord] = {}

    async def run(self, quote: Quote) -> ExecutionResult:
        origin = quote.details.currency_in.currency.chain_id
        for index, step in enumerate(quote.steps):
            self.emit(StepStarted(step.id, step.kind, index, len(quote.steps)))
            for item in step.items:
                await self._item(step, item, origin)
                if item.check is not None and self.options.wait_for_fill:
                    await self._follow(step, item.check.endpoint)
            self.emit(StepCompleted(step.id))
        return ExecutionResult(quote.request_ids, tuple(self.sent), dict(self.statuses))

    def emit(self, event: ProgressEvent) -> None:
        if self.on_progress is not None:
            self.on_progress(event)

    def rpc(self, chain_id: int, step_id: str) -> JsonRpc:
        url = self.rpc_urls.get(chain_id)
        if url is None:
            raise ExecutionError(f"no RPC URL given for chain {chain_id}", step_id=step_id)
        return JsonRpc(self.chain_http, url, self.service.retry, self.service.sleep)

    async def _item(self, step: Step, item: StepItem, origin: int) -> None:
        data = item.data
        if isinstance(data, EvmTransactionData):
            await self._evm(step, data, hint=item.check is not None)
        elif isinstance(data, SvmTransactionData):
            await self._svm(step, data)
        elif isinstance(data, ExchangeActionData):
            await self._exchange(step, data, origin)
        elif isinstance(data, SignatureData):
            await sign_and_post(self.service, self._evm_signer(step), data, step_id=step.id)
            self.emit(SignaturePosted(step.id, data.post.endpoint))

    async def _evm(self, step: Step, data: EvmTransactionData, *, hint: bool) -> None:
        rpc = self.rpc(data.chain_id, step.id)
        tx_hash = await send_evm_transaction(rpc, self._evm_signer(step), data)
        self._submitted(step, data.chain_id, tx_hash)
        if hint:
            await self._hint(tx_hash, data.chain_id)
        landed = wait_for_receipt(
            rpc, data.chain_id, tx_hash, interval=self._interval, step_id=step.id
        )
        await self._confirmed(step, data.chain_id, tx_hash, landed)

    async def _svm(self, step: Step, data: SvmTransactionData) -> None:
        rpc = self.rpc(data.chain_id, step.id)
        signature = await send_svm_transaction(rpc, self._svm_signer(step), data, step_id=step.id)
        self._submitted(step, data.chain_id, signature)
        landed = wait_for_signature(
            rpc, data.chain_id, signature, interval=self._interval, step_id=step.id
        )
        await self._confirmed(step, data.chain_id, signature, landed)

    @property
    def _interval(self) -> float:
        return self.options.confirmation_interval

    async def _confirmed(
        self, step: Step, chain_id: int, tx_id: str, landed: Coroutine[Any, Any, None]
    ) -> None:
        """Awaits `landed` for at most `confirmation_timeout` seconds, then reports it."""
        timeout = self.options.confirmation_timeout
        try:
            async with asyncio.timeout(timeout):
                await landed
        except TimeoutError as exc:
            raise ExecutionError(f"{tx_id} did not land in {timeout} s", step_id=step.id) from exc
        self.emit(TransactionConfirmed(step.id, chain_id, tx_id))

    async def _exchange(self, step: Step, data: ExchangeActionData, chain_id: int) -> None:
        url = self.rpc_urls.get(chain_id)
        if url is None:
            raise ExecutionError(f"no exchange URL given for chain {chain_id}", step_id=step.id)
        body = signed_action_body(
            self._evm_signer(step),
            data,
            signature_chain_id=self.options.exchange_signature_chain_id,
        )
        await post_action(self.chain_http, url, body, self.service.retry, step_id=step.id)
        self.emit(ExchangeActionPosted(step.id, data.nonce))

    async def _hint(self, tx_hash: str, chain_id: int) -> None:
        """Tell the service where the deposit is, so it need not wait for its next scan. Only
        a hint: the deposit is found without it, so a refusal changes nothing."""
        with contextlib.suppress(ApiError, TransportError):
            await self.service.call(
                "POST", "/transactions/index", json={"txHash": tx_hash, "chainId": str(chain_id)}
            )

    async def _follow(self, step: Step, path: str) -> None:
        def changed(record: StatusRecord) -> None:
            self.emit(StatusChanged(step.id, record))

        record = await wait_for_request(
            self.service, step.request_id, self.options.wait, path=path, on_status=changed
        )
        self.statuses[step.request_id] = record
        if record.status.is_failed:
            raise RequestFailed(record)

    def _submitted(self, step: Step, chain_id: int, tx_id: str) -> None:
        self.sent.append(SentTransaction(step.id, chain_id, tx_id))
        self.emit(TransactionSubmitted(step.id, chain_id, tx_id))

    def _evm_signer(self, step: Step) -> EvmSigner:
        if self.signer.evm is None:
            raise ExecutionError("the step needs an EVM signer", step_id=step.id)
        return self.signer.evm

    def _svm_signer(self, step: Step) -> SvmSigner:
        if self.signer.svm is None:
            raise ExecutionError("the step needs an SVM signer", step_id=step.id)
        return self.signer.svm
