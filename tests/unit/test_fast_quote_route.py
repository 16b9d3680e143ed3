"""Which quote requests the front serves itself (the rest go through the middleware stack to
FastAPI's route, their body replayed, so their errors keep their shape: pinned by
tests/e2e/test_hostile_inputs.py and test_fuzz_api.py), and the body turned into planning's
request."""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError
from typing import Any

import orjson
import pytest
from starlette.middleware.cors import CORSMiddleware
from starlette.types import Message, Receive, Scope, Send

from crossfill.api.limits import RequestLimits
from crossfill.api.routes.quote_fast import QuoteFront, _well_formed
from crossfill.api.schemas.quote import QuoteBody
from crossfill.quoting.request import AppFee, ExtraTx, QuoteRequest, quote_request

BODY = {
    "user": "0x" + "ab" * 20,
    "originChainId": 1,
    "destinationChainId": 2,
    "originCurrency": "0x" + "00" * 20,
    "destinationCurrency": "0x" + "00" * 20,
    "amount": "1000",
    "tradeType": "EXACT_INPUT",
}


def _snake(wire_name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", wire_name).lower()


LIMITS = RequestLimits(
    max_body_bytes=4096, max_header_count=10, max_header_bytes=2048, max_header_line_bytes=512
)


def _scope(content_type: str | None, *, path: str = "/quote/v2", **extra: Any) -> Scope:
    headers = [] if content_type is None else [(b"content-type", content_type.encode())]
    return {"type": "http", "method": "POST", "path": path, "headers": headers, **extra}


class _Stack:
    """The middleware stack behind the front: records what reached it."""

    def __init__(self) -> None:
        self.received: list[Message] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            self.received.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                return


def _front(stack: _Stack) -> QuoteFront:
    return QuoteFront(
        stack,
        limits=LIMITS,
        cors=CORSMiddleware(stack, allow_origins=["*"]),
        exception_handlers={},
    )


@pytest.mark.parametrize("content_type", ["application/json", "Application/JSON; charset=utf-8"])
def test_a_json_post_to_a_quote_path_is_taken_by_the_front(content_type: str) -> None:
    assert _front(_Stack())._takes(_scope(content_type))
    assert _well_formed(orjson.dumps(BODY)) is not None


@pytest.mark.parametrize(
    "scope",
    [
        _scope("text/plain"),
        _scope("application/vnd.api+json"),
        _scope(None),
        _scope("application/json", path="/price"),
        _scope("application/json", method="GET"),
        _scope("application/json", root_path="/api"),
        {**_scope("application/json"), "headers": [(b"content-length", b"5000")]},
        {
            **_scope("application/json"),
            "headers": [(b"content-type", b"application/json")] + [(b"x", b"y")] * 10,
        },
    ],
)
def test_other_requests_pass_to_the_stack_untouched(scope: Scope) -> None:
    assert not _front(_Stack())._takes(scope)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"{not json",
        b"[1, 2]",
        orjson.dumps({**BODY, "originChainId": "one"}),
        orjson.dumps({key: BODY[key] for key in list(BODY)[1:]}),
    ],
)
def test_bodies_fastapi_should_answer_are_not_served(raw: bytes) -> None:
    assert _well_formed(raw) is None


@pytest.mark.parametrize(
    "chunks",
    [
        [b"{not ", b"json"],
        [b"x" * 3000, b"x" * 3000, b"more"],  # passes the limit: the stack refuses it
    ],
)
async def test_a_declined_body_reaches_the_stack_as_it_was_sent(chunks: list[bytes]) -> None:
    sent: list[Message] = [
        {"type": "http.request", "body": chunk, "more_body": index < len(chunks) - 1}
        for index, chunk in enumerate(chunks)
    ]
    queue = list(sent)

    async def receive() -> Message:
        return queue.pop(0)

    async def send(message: Message) -> None:
        raise AssertionError("the front answered itself")

    stack = _Stack()
    await _front(stack)(_scope("application/json"), receive, send)
    assert stack.received == sent


def test_the_body_becomes_the_same_request_as_field_by_field() -> None:
    document = {
        **BODY,
        "txs": [{"to": "0x" + "44" * 20, "data": "0x"}],
        "appFees": [{"recipient": "0x" + "55" * 20, "fee": "10"}],
        "includedSwapSources": ["uniswap"],
        "additionalData": {"note": 1},
        "slippageTolerance": "50",
    }
    model = QuoteBody.model_validate(document)
    expected = QuoteRequest(
        **{
            name: getattr(model, wire_name)
            for wire_name, name in (
                (wire_name, _snake(wire_name)) for wire_name in QuoteBody.model_fields
            )
        }
        | {
            "txs": (ExtraTx(to="0x" + "44" * 20, data="0x"),),
            "app_fees": (AppFee(recipient="0x" + "55" * 20, fee="10"),),
            "included_swap_sources": ("uniswap",),
        }
    )
    built = model.to_request()
    assert built == expected and isinstance(built, QuoteRequest)
    assert built.additional_data == {"note": 1} and built.authorization_list is None
    with pytest.raises(FrozenInstanceError):
        built.amount = "1"  # type: ignore[misc]


def test_a_request_needs_every_field() -> None:
    with pytest.raises(TypeError, match="amount"):
        quote_request({"user": "0x"})
