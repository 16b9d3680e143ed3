"""Which quote bodies the fast route serves itself (the rest go to FastAPI's route, whose
errors keep their shape: pinned by tests/e2e/test_hostile_inputs.py and test_fuzz_api.py), and
the body turned into planning's request."""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError

import orjson
import pytest
from starlette.requests import Request

from crossfill.api.routes.quote_fast import _well_formed
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
