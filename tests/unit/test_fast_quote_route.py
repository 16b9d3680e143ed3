"""Which quote bodies the fast route serves itself; the rest go to FastAPI's route, whose
errors keep their shape (pinned by tests/e2e/test_hostile_inputs.py and test_fuzz_api.py)."""

from __future__ import annotations

import orjson
import pytest
from starlette.requests import Request

from crossfill.api.routes.quote_fast import _well_formed

BODY = {
    "user": "0x" + "ab" * 20,
    "originChainId": 1,
    "destinationChainId": 2,
    "originCurrency": "0x" + "00" * 20,
    "destinationCurrency": "0x" + "00" * 20,
    "amount": "1000",
    "tradeType": "EXACT_INPUT",
}


def _request(content_type: str | None) -> Request:
    headers = [] if content_type is None else [(b"content-type", content_type.encode())]
    return Request({"type": "http", "method": "POST", "path": "/quote/v2", "headers": headers})


@pytest.mark.parametrize("content_type", ["application/json", "Application/JSON; charset=utf-8"])
def test_a_valid_json_body_is_served_by_the_fast_route(content_type: str) -> None:
    body = _well_formed(_request(content_type), orjson.dumps(BODY))
    assert body is not None and body.amount == "1000"


@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        ("application/json", b""),
        ("application/json", b"{not json"),
        ("application/json", b"[1, 2]"),
        ("application/json", orjson.dumps({**BODY, "originChainId": "one"})),
        ("application/json", orjson.dumps({key: BODY[key] for key in list(BODY)[1:]})),
        ("text/plain", orjson.dumps(BODY)),
        ("application/vnd.api+json", orjson.dumps(BODY)),
        (None, orjson.dumps(BODY)),
    ],
)
def test_anything_else_goes_to_fastapis_route(content_type: str | None, raw: bytes) -> None:
    assert _well_formed(_request(content_type), raw) is None
