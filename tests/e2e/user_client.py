"""The Python client (`crossfill_client`) as the end-to-end tests run it: a user who quotes,
executes the quote's steps with their own wallets through the devnet's nodes, and waits for
the request's end.

`UserClient` is the client itself, with three test-minded differences: it keeps every answer
the service gave it as JSON (`wire`), checks each quote and each final status record it hands
back against their schemas (what it parsed is that JSON: its models read "1" and 1 alike),
and waits as long as a test may (a minute) rather than as long as a user would."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from eth_account.signers.local import LocalAccount
from pydantic import JsonValue
from solders.keypair import Keypair

from crossfill_client import (
    Client,
    ExecutionOptions,
    ExecutionResult,
    QuoteRequest,
    RequestFailed,
    RequestStatus,
    RetryPolicy,
    Signer,
    WaitOptions,
)
from crossfill_client.models import Quote, StatusRecord
from crossfill_client.progress import ProgressCallback
from crossfill_client.signing import EvmWallet, SvmWallet
from tests.e2e.wire import RecordingTransport, WireLog, validate_against

QUOTE_PATH = "/quote/v2"
STATUS_PATH = "/intents/status/v3"
HINT_PATH = "/transactions/index"
PATIENCE = WaitOptions(timeout=60, poll_interval=0.2)
# Checks followed with a test's patience, receipts asked for as often as the devnet mines.
EXECUTION = ExecutionOptions(wait=PATIENCE, confirmation_interval=0.2)
# The quote's steps sent, the request not followed (a test follows it its own way).
SENT_ONLY = replace(EXECUTION, wait_for_fill=False)
# An answer 503 (a node or the database did not answer; Retry-After 1 s): up to ten tries.
RETRIES = RetryPolicy(attempts=10)


def waiting_until(*statuses: RequestStatus) -> WaitOptions:
    """A test's patience, the wait ending at one of `statuses` only (a request refunded goes
    `failure` first: `waiting_until(RequestStatus.REFUND)` waits on for the refund)."""
    return replace(PATIENCE, until=frozenset(statuses))


def following_until(*statuses: RequestStatus) -> ExecutionOptions:
    """`execute` following each check until one of `statuses` (`waiting_until`)."""
    return replace(EXECUTION, wait=waiting_until(*statuses))


def succeeded(result: ExecutionResult) -> StatusRecord:
    """The final status record of the quote's request, which must be `success`."""
    status = result.status
    assert status is not None and status.status is RequestStatus.SUCCESS, status
    return status


def evm_wallet(account: LocalAccount) -> Signer:
    return Signer(evm=EvmWallet(account))


def svm_wallet(keypair: Keypair) -> Signer:
    return Signer(svm=SvmWallet(keypair))


class UserClient(Client):
    """A user's client of the service at `base_url`, sending through `rpc_urls` (chain id →
    the devnet node's URL; the perps exchange's API URL for 1337)."""

    def __init__(
        self,
        base_url: str,
        rpc_urls: Mapping[int, str],
        *,
        api_key: str | None = None,
        retry: RetryPolicy = RETRIES,
    ) -> None:
        self.wire = WireLog()
        self.chain_urls = dict(rpc_urls)
        super().__init__(
            base_url,
            api_key=api_key,
            timeout=10,
            retry=retry,
            transport=RecordingTransport(self.wire),
        )

    def quote(self, request: QuoteRequest) -> Quote:
        """`Client.quote`; the answer checked on the wire against the quote schema."""
        quote = super().quote(request)
        validate_against("quote", self.answered(QUOTE_PATH))
        return quote

    def execute(
        self,
        quote: Quote,
        signer: Signer,
        *,
        rpc_urls: Mapping[int, str] | None = None,
        on_progress: ProgressCallback | None = None,
        options: ExecutionOptions | None = None,
    ) -> ExecutionResult:
        """`Client.execute` through the devnet's nodes unless `rpc_urls`, with `EXECUTION`
        unless `options`; the last status record of each request it followed checked on the
        wire, a failed or refunded one's too."""
        try:
            result = super().execute(
                quote,
                signer,
                rpc_urls=rpc_urls or self.chain_urls,
                on_progress=on_progress,
                options=options or EXECUTION,
            )
        except RequestFailed:
            self._check_statuses(quote.request_ids)
            raise
        self._check_statuses(result.statuses.keys())
        return result

    def wait(
        self,
        request_id: str,
        options: WaitOptions | None = None,
        *,
        on_status: Callable[[StatusRecord], None] | None = None,
    ) -> StatusRecord:
        """`Client.wait` for at most a minute unless `options`; the record checked on the
        wire."""
        record = super().wait(request_id, options or PATIENCE, on_status=on_status)
        self._check_statuses([request_id])
        return record

    def answered(self, path: str, **params: str) -> JsonValue:
        """The JSON of the service's last answer to `path` (with `params` in its query), as
        it came."""
        answer = self.wire.last(path, **params)
        assert answer is not None, f"no answer to {path} {params}"
        return answer.body

    def hints_answered(self) -> list[int]:
        """The status code of each deposit hint the client gave (`POST /transactions/index`),
        oldest first."""
        return [answer.status_code for answer in self.wire.to(HINT_PATH)]

    def _check_statuses(self, request_ids: Iterable[str]) -> None:
        for request_id in request_ids:
            answer = self.wire.last(STATUS_PATH, requestId=request_id)
            if answer is not None:
                validate_against("status", answer.body)


# Makes a user's client of the test's service (`user_clients(api_key)`).
UserClients = Callable[..., UserClient]
