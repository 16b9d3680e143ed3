"""JSON answers the routes build themselves.

A route declared `response_model=None` (so that documentation-only OpenAPI models never filter
an answer) would have FastAPI walk its result through `jsonable_encoder`, which costs about
1 ms of CPU on a quote-sized document; the busiest routes hand orjson's bytes over instead.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Response


def json_answer(content: dict[str, Any]) -> Response:
    return Response(orjson.dumps(content), media_type="application/json")


def encoded_answer(content: bytes) -> Response:
    """A JSON answer encoded already."""
    return Response(content, media_type="application/json")
