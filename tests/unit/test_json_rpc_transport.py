"""What the JSON-RPC transport makes of a node's answers, whatever their order or shape."""

from __future__ import annotations

import json
import sys
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict, CIMultiDictProxy
from web3.types import RPCEndpoint
from yarl import URL

from crossfill.chains.transport import JsonRpcProvider, MalformedReply
from crossfill.errors import BatchRefused

CALLS = [(RPCEndpoint("eth_getBalance"), ["0x1", "latest"]), (RPCEndpoint("eth_call"), [{}])]


class _Answering(JsonRpcProvider):
    """The provider with the node's answer given: `answer` builds it from the request sent."""

    def __init__(self, answer: Any) -> None:
        super().__init__("http://node.invalid", timeout_seconds=1)
        self._answer = answer

    async def _post(self, body: bytes) -> bytes:
        answer = self._answer(json.loads(body))
        return answer if isinstance(answer, bytes) else json.dumps(answer).encode()


def _results(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"jsonrpc": "2.0", "id": r["id"], "result": r["method"]} for r in requests]


async def test_answers_in_another_order_are_matched_to_their_calls_by_id() -> None:
    provider = _Answering(lambda requests: _results(requests)[::-1])
    answers = await provider.make_batch_request(CALLS)
    assert [a["result"] for a in answers] == ["eth_getBalance", "eth_call"]  # type: ignore[index]


async def test_ids_echoed_as_strings_still_match() -> None:
    def stringly(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**answer, "id": str(answer["id"])} for answer in _results(requests)[::-1]]

    answers = await _Answering(stringly).make_batch_request(CALLS)
    assert [a["result"] for a in answers] == ["eth_getBalance", "eth_call"]  # type: ignore[index]


async def test_a_call_left_unanswered_gets_an_error_answer() -> None:
    answers = await _Answering(lambda requests: _results(requests)[1:]).make_batch_request(CALLS)
    assert isinstance(answers, list)
    assert "result" not in answers[0] and "error" in answers[0]
    assert answers[1]["result"] == "eth_call"


async def test_answers_without_ids_are_read_in_order() -> None:
    def idless(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"jsonrpc": "2.0", "result": r["method"]} for r in requests]

    answers = await _Answering(idless).make_batch_request(CALLS)
    assert [a["result"] for a in answers] == ["eth_getBalance", "eth_call"]  # type: ignore[index]


async def test_answers_that_are_not_objects_are_no_answers() -> None:
    answers = await _Answering(lambda _requests: [1, "two"]).make_batch_request(CALLS)
    assert isinstance(answers, list)
    assert all("error" in answer and "result" not in answer for answer in answers)


async def test_a_batch_refused_whole_is_batch_refused_in_the_servers_words() -> None:
    refusal = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no batches"}}
    with pytest.raises(BatchRefused, match="a batch of 2 answered no batches"):
        await _Answering(lambda _requests: refusal).make_batch_request(CALLS)


@pytest.mark.parametrize(
    ("status", "refused"), [(400, True), (413, True), (429, False), (502, False)]
)
async def test_a_batch_answered_a_refusing_status_is_batch_refused(
    status: int, refused: bool
) -> None:
    """400, 405, 413 and 501 say the endpoint takes no such request; 429 and a gateway's 5xx
    are the endpoint's trouble, retried as such."""

    def failing(_requests: object) -> bytes:
        raise aiohttp.ClientResponseError(
            aiohttp.RequestInfo(
                URL("http://node.invalid"), "POST", CIMultiDictProxy(CIMultiDict())
            ),
            (),
            status=status,
        )

    with pytest.raises(BatchRefused if refused else aiohttp.ClientResponseError):
        await _Answering(failing).make_batch_request(CALLS)


async def test_a_batch_answered_an_object_that_is_no_error_is_malformed() -> None:
    with pytest.raises(MalformedReply):
        await _Answering(lambda _requests: {"jsonrpc": "2.0", "id": 1}).make_batch_request(CALLS)


@pytest.mark.parametrize(
    "answer", [b"<html>502 Bad Gateway</html>", b"\xff\xfe not text", b"[1, 2]"]
)
async def test_an_answer_that_is_not_a_json_rpc_object_is_malformed(answer: bytes) -> None:
    provider = _Answering(lambda _request: answer)
    with pytest.raises(MalformedReply):
        await provider.make_request(RPCEndpoint("eth_chainId"), [])


def _nested_answer(request_id: int, depth: int) -> bytes:
    """A result nested `depth` objects deep, as geth's call frames of as many nested calls
    are (built as text: the encoder has the decoder's limit)."""
    frame = '{"type":"CALL"}'
    for _ in range(depth):
        frame = '{"type":"CALL","calls":[' + frame + "]}"
    return f'{{"jsonrpc":"2.0","id":{request_id},"result":{frame}}}'.encode()


async def test_the_call_frames_of_the_deepest_evm_calls_are_read() -> None:
    """1,024 nested calls (the EVM's limit) pass the decoder's usual limit of nesting; the
    interpreter's recursion limit is as it was after."""
    limit = sys.getrecursionlimit()
    provider = _Answering(lambda request: _nested_answer(request["id"], 1_024))
    answer = await provider.make_request(RPCEndpoint("debug_traceTransaction"), ["0x1"])
    depth, frame = 0, answer["result"]
    while frame.get("calls"):
        depth, frame = depth + 1, frame["calls"][0]
    assert depth == 1_024
    assert sys.getrecursionlimit() == limit


async def test_an_answer_nested_deeper_than_any_trace_is_malformed() -> None:
    limit = sys.getrecursionlimit()
    provider = _Answering(lambda request: _nested_answer(request["id"], 5_000))
    with pytest.raises(MalformedReply, match="nested deeper"):
        await provider.make_request(RPCEndpoint("debug_traceTransaction"), ["0x1"])
    assert sys.getrecursionlimit() == limit
