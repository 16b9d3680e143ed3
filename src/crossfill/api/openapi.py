"""The OpenAPI document at /openapi.json, made to tell the truth about the wire.

- Errors: one shape, `{message, statusCode, errorCode?}` (`errorCode` always on the quote
  paths); validation failures are 400, so FastAPI's generated 422 is removed. The OIF paths
  (`/oif/…`) document OIF's error shape `{error, message, details?}` and its 422.
- 200 bodies of the main routes are the wire schemas (`wire_schemas/*.schema.json`, copies
  of the spec's schemas, which the tests validate answers against too); the other routes
  document pydantic models (`api/schemas/responses.py`). Both only document: no route
  filters its answer.
- GET /requests/v3 and /requests/v2 read their query string themselves; their parameters
  are generated from `domain/listing_query`'s tables, the same ones the parser uses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ConfigDict, Field

from crossfill.api.schemas.oif import OifErrorResponse
from crossfill.domain import listing_query as lq
from crossfill.domain.enums import FAIL_REASONS, FEATURES, REFUND_FAIL_REASONS, REQUEST_TYPES
from crossfill.domain.identifiers import INT64_MAX, MAX_UNIX_SECONDS
from crossfill.domain.status import RequestStatus

Responses = dict[int | str, dict[str, Any]]

# Wire schema file → component name.
WIRE_SCHEMAS = {
    "chains": "Chains",
    "quote": "Quote",
    "quote-error": "QuoteErrorWire",
    "status": "Status",
    "requests-v3": "RequestsV3",
    "price": "Price",
    "app-fee-balances": "AppFeeBalances",
    "app-fee-claim": "AppFeeClaim",
    "app-fee-claim-status": "AppFeeClaimStatus",
    "currencies-v2": "CurrenciesV2",
    "token-price": "TokenPrice",
    "config-v2": "ConfigV2",
}
_DESCRIPTIONS = {
    400: "Invalid request (malformed body, parameter or identifier)",
    401: "Missing, invalid or revoked credentials",
    403: "Not allowed for these credentials",
    404: "Not found",
    409: "The state changed under the request (e.g. a balance since a claim was prepared)",
    410: "Retired endpoint",
    413: "Request body too large",
    422: "Well-formed, but not served as asked (OIF paths: a chain, asset, lock or order type "
    "not served; an order Crossfill would not fill; a bad signature)",
    429: "Rate limit exceeded (Retry-After says when to retry)",
    431: "Request headers too many or too large",
    500: "Internal error",
    503: "A dependency (database, chain, prices) is unavailable",
}
# Every HTTP route can meet these: the size limits and an unexpected failure.
ALWAYS = (413, 431, 500)


class ErrorBody(BaseModel):
    """Every error: `errorCode` when the error has a code (always on the quote paths)."""

    model_config = ConfigDict(extra="allow")
    message: str
    statusCode: int
    errorCode: str | None = None


class FailedCallData(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from")
    to: str
    data: str
    value: str


class QuoteErrorBody(BaseModel):
    """A /quote or /quote/v2 error: always coded; a 500 also carries `requestId`, and a quote
    refused by simulating it the Detailed fields (`errorData` .. `failedCallData`)."""

    model_config = ConfigDict(extra="allow")
    message: str
    statusCode: int
    errorCode: str
    requestId: str | None = None
    errorData: str | None = None
    approxSimulatedBlock: int | None = None
    failedCallData: FailedCallData | None = None


def wire_schema(name: str) -> dict[str, Any]:
    """One of the packaged wire schemas, as its component reference."""
    return {"$ref": f"#/components/schemas/{WIRE_SCHEMAS[name]}"}


def responses(
    ok: type[BaseModel] | str | None,
    *errors: int,
    quote: bool = False,
    ok_status: int = 200,
) -> Responses:
    """A route's documented answers: `ok` (a model or a wire schema name) and `errors`."""
    documented: Responses = {}
    if isinstance(ok, str):
        documented[ok_status] = {
            "description": "Success",
            "content": {"application/json": {"schema": wire_schema(ok)}},
        }
    elif ok is not None:
        documented[ok_status] = {"description": "Success", "model": ok}
    error_model = QuoteErrorBody if quote else ErrorBody
    for status in sorted({*errors, *ALWAYS}):
        documented[status] = {"description": _DESCRIPTIONS[status], "model": error_model}
    return documented


# The Open Intents Framework's endpoints (`api.routes.oif`): its error shape, its 422.
OIF_PREFIX = "/oif/"


def oif_responses(ok: type[BaseModel], *errors: int) -> Responses:
    """An OIF route's documented answers: `ok` and `errors`, each error OIF's shape."""
    documented: Responses = {200: {"description": "Success", "model": ok}}
    for status in sorted({*errors, *ALWAYS}):
        documented[status] = {"description": _DESCRIPTIONS[status], "model": OifErrorResponse}
    return documented


# ---- GET /requests query parameters, from listing_query's tables -------------------------

# domain.identifiers: block numbers and durations below 2**63, timestamps up to the year 3000.
_RANGE_BOUND = {"type": "integer", "minimum": 0, "maximum": INT64_MAX}
_TIMESTAMP_BOUND = {"type": "integer", "minimum": 0, "maximum": MAX_UNIX_SECONDS}
_TIMESTAMPS = ("startTimestamp", "endTimestamp")


def _comma_list(one: str, *, may_be_empty: bool = False) -> dict[str, Any]:
    """A parameter value as the parser splits it: comma-separated, empty parts skipped, each
    part matching the regular expression `one`; at least one unless `may_be_empty`."""
    parts = f",*(?:{one})(?:,+(?:{one}))*"
    return {"type": "string", "pattern": f"^(?:{parts})?,*$" if may_be_empty else f"^{parts},*$"}


def _field_value(one: str) -> dict[str, Any]:
    # A repeated field parameter is refused only when all its values together are empty.
    return _comma_list(one, may_be_empty=True)


def _any_of(values: Iterable[str]) -> str:
    return "|".join(re.escape(value) for value in values)


_FREE_TEXT = "[^,]{1,200}"  # listing_query._value: a non-empty string of at most 200
_FIELD_VALUES: dict[lq.Kind, dict[str, Any]] = {
    lq.Kind.HEX: _field_value(_FREE_TEXT),
    lq.Kind.ID: _field_value("0x[0-9a-fA-F]{64}"),
    lq.Kind.INT: _field_value(f"[0-9]{{1,{len(str(INT64_MAX))}}}"),
    lq.Kind.STATUS: _field_value(_any_of(status.value for status in RequestStatus)),
    lq.Kind.FAIL_REASON: _field_value(_any_of(sorted(FAIL_REASONS))),
    lq.Kind.REFUND_FAIL_REASON: _field_value(_any_of(sorted(REFUND_FAIL_REASONS))),
    lq.Kind.REQUEST_TYPE: _field_value(_any_of(REQUEST_TYPES)),
    lq.Kind.SYMBOL: _field_value(_FREE_TEXT),
    lq.Kind.TEXT: _field_value(_FREE_TEXT),
}


def _parameter(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


def _field_parameters(names: Iterable[str], fields: dict[str, lq.Kind]) -> list[dict[str, Any]]:
    return [
        _parameter(
            name,
            {"type": "array", "items": _FIELD_VALUES[fields[name]], "maxItems": lq.MAX_VALUES},
            f"Matches any of the values (repeat the parameter or separate with commas); "
            f"{fields[name].value}",
        )
        for name in sorted(names)
    ]


def listing_parameters(*, v2: bool) -> list[dict[str, Any]]:
    """Every query parameter `parse_listing` reads, for /requests/v2 (`v2`) or /requests/v3."""
    fields = {**lq.FIELDS, **lq.V2_FIELDS} if v2 else lq.FIELDS
    parameters = _field_parameters(lq.V2_FIELD_NAMES if v2 else lq.V3_FIELD_NAMES, fields)
    for name in lq.V2_RANGES if v2 else lq.INT_RANGES:
        bound = _TIMESTAMP_BOUND if name in _TIMESTAMPS else _RANGE_BOUND
        parameters.append(_parameter(name, bound, "Range bound"))
    if not v2:
        usd = {"type": "number", "minimum": 0, "maximum": 10**12}
        parameters += [_parameter(name, usd, "USD range bound") for name in lq.USD_RANGES]
        features = _comma_list(_any_of(FEATURES))
        parameters.append(_parameter("features", features, "Comma-separated; all must match"))
        parameters.append(
            _parameter(
                "filters",
                {"type": "string", "maxLength": lq.MAX_FILTERS_LENGTH},
                f"JSON array of 1..{lq.MAX_GROUPS} objects: fields AND-ed within a group, "
                "groups OR-ed, `not:` negates a field",
            )
        )
    sorts = [s.value for s in lq.SortBy if not v2 or s is not lq.SortBy.AMOUNT_USD]
    parameters += [
        # Empty means the default, as for every parameter the parser reads with `or`.
        _parameter("sortBy", {"type": "string", "enum": ["", *sorts]}, "Sort key"),
        _parameter(
            "sortDirection", {"type": "string", "enum": ["", "asc", "desc"]}, "Default by sortBy"
        ),
        _parameter(
            "limit",
            {"type": "integer", "minimum": 1, "maximum": lq.MAX_LIMIT, "default": lq.DEFAULT_LIMIT},
            "Records per page",
        ),
        _parameter("continuation", {"type": "string"}, "Cursor from the previous page"),
    ]
    # Read (and checked) on both versions; v3 records have no order data to include.
    flags = ["includeTotal", "includeAuthenticatedData", "includeChildRequests", "includeOrderData"]
    # Strings, not booleans: the parser takes exactly these spellings (case aside).
    flag_schema = {"type": "string", "enum": ["true", "false", "1", "0"]}
    parameters += [_parameter(flag, flag_schema, "Defaults to false") for flag in flags]
    return parameters


# ---- the document ----------------------------------------------------------------------------


@cache
def _wire_components() -> dict[str, dict[str, Any]]:
    folder = resources.files("crossfill.api") / "wire_schemas"
    components = {}
    for file_name, component in WIRE_SCHEMAS.items():
        schema = json.loads((folder / f"{file_name}.schema.json").read_text())
        schema.pop("$schema", None)
        components[component] = schema
    return components


def _without_422(document: dict[str, Any]) -> None:
    """FastAPI's generated 422 removed (validation failures are 400s); the OIF paths keep the
    422 they document, OIF's own."""
    for path, operations in document.get("paths", {}).items():
        for operation in operations.values():
            answers = operation.get("responses", {})
            if path.startswith(OIF_PREFIX) and "HTTPValidationError" not in json.dumps(
                answers.get("422")
            ):
                continue
            answers.pop("422", None)
    schemas = document.get("components", {}).get("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)


def documented_methods(app: FastAPI, path: str) -> list[str]:
    """The methods the document lists for the operation paths `path` matches (for `Allow`:
    FastAPI's 405 names only the first route that matched the path, not all of them)."""
    methods: set[str] = set()
    for template, operations in app.openapi()["paths"].items():
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            methods.update(method.upper() for method in operations)
    return sorted(methods)


def install_openapi(app: FastAPI) -> None:
    """Replace the app's OpenAPI generator: FastAPI's, minus 422, plus the wire schemas."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                description=app.description,
                routes=app.routes,
            )
            _without_422(document)
            components = document.setdefault("components", {}).setdefault("schemas", {})
            named_twice = components.keys() & _wire_components().keys()
            if named_twice:
                raise RuntimeError(f"models named as wire schemas: {sorted(named_twice)}")
            components.update(_wire_components())
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
