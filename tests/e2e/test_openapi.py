"""/openapi.json tells the truth: the wire schemas, the error shape, every listing parameter."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import jsonschema
import pytest

from crossfill.domain import listing_query as lq
from tests.conftest import SCHEMAS_DIR
from tests.e2e.conftest import validate_against

# Main route → the wire schema its 200 answer must be.
MAIN_ROUTES = {
    ("post", "/quote/v2"): "quote",
    ("post", "/quote"): "quote",
    ("get", "/intents/status/v3"): "status",
    ("get", "/intents/status"): "status",
    ("get", "/requests/v3"): "requests-v3",
    ("get", "/chains"): "chains",
    ("post", "/price"): "price",
    ("get", "/app-fees/{wallet}/balances"): "app-fee-balances",
    ("post", "/app-fees/{wallet}/claim"): "app-fee-claim",
    ("get", "/app-fees/{wallet}/claims/{claimId}"): "app-fee-claim-status",
    ("post", "/currencies/v2"): "currencies-v2",
    ("get", "/currencies/token/price"): "token-price",
    ("get", "/config/v2"): "config-v2",
}
QUOTE_PATHS = ("/quote", "/quote/v2", "/price")
# The Open Intents Framework's endpoints: OIF's error shape, and the 422 its spec documents.
OIF_PREFIX = "/oif/"


@pytest.fixture
def document(client: httpx.Client) -> dict[str, Any]:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def _wire(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS_DIR / f"{name}.schema.json").read_text())
    return schema


def _resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The schema a `$ref` into components names (one level: components are flat)."""
    reference = schema.get("$ref")
    if reference is None:
        return schema
    component: dict[str, Any] = document["components"]["schemas"][reference.split("/")[-1]]
    return component


def _validator(document: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Validator:
    """Validates against a documented schema, `$ref`s into the document's components."""
    root = {**schema, "components": document["components"]}
    return jsonschema.Draft202012Validator(root)


def _template(document: dict[str, Any], path: str) -> str:
    """The documented path (`/app-fees/{wallet}/balances`) a concrete path falls under."""
    for template in document["paths"]:
        if re.fullmatch(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)), path):
            return str(template)
    raise KeyError(path)


def _response_schema(document: dict[str, Any], method: str, path: str, status: int) -> Any:
    answer = document["paths"][_template(document, path)][method]["responses"][str(status)]
    return answer["content"]["application/json"]["schema"]


def test_no_route_documents_fastapi_validation_errors(document) -> None:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if path.startswith(OIF_PREFIX) and "422" in operation["responses"]:
                schema = operation["responses"]["422"]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/OifErrorResponse"}, path
                continue
            assert "422" not in operation["responses"], (method, path)
            assert "400" in operation["responses"] or not operation.get("parameters"), path
    assert "HTTPValidationError" not in document["components"]["schemas"]


@pytest.mark.parametrize(("route", "wire_name"), list(MAIN_ROUTES.items()))
def test_main_routes_document_the_wire_schemas(document, route, wire_name) -> None:
    method, path = route
    documented = _resolved(document, _response_schema(document, method, path, 200))
    wire = _wire(wire_name)
    wire.pop("$schema")
    assert documented == wire


def test_every_documented_error_is_the_error_shape(document) -> None:
    """Each documented error schema accepts a coded error and, on the quote paths, demands
    the code (what quote-error.schema.json and the compat notes promise clients)."""
    for path, operations in document["paths"].items():
        for operation in operations.values():
            for status, answer in operation["responses"].items():
                if int(status) < 400:
                    continue
                schema = answer["content"]["application/json"]["schema"]
                validator = _validator(document, schema)
                if path.startswith(OIF_PREFIX):
                    validator.validate({"error": "X", "message": "m"})
                    assert not validator.is_valid({"message": "m", "statusCode": int(status)})
                    continue
                coded = {"message": "m", "statusCode": int(status), "errorCode": "X"}
                validator.validate(coded)
                uncoded = {"message": "m", "statusCode": int(status)}
                assert validator.is_valid(uncoded) == (path not in QUOTE_PATHS), (path, status)
                if path in QUOTE_PATHS:
                    validate_against("quote-error", coded)


def test_real_errors_match_what_is_documented(client, document) -> None:
    attempts: list[tuple[str, str, dict[str, Any]]] = [
        ("post", "/quote/v2", {"json": {"ttl": "soon"}}),
        ("post", "/quote", {"content": b"{not json"}),
        ("post", "/quote/v2", {"json": {}, "headers": {"x-api-key": "nope"}}),
        ("get", "/intents/status/v3", {"params": {"requestId": "0x" + "00" * 32}}),
        ("get", "/requests/v3", {}),
        ("get", "/requests/v3", {"params": {"limit": "51"}, "headers": {"x-api-key": "x"}}),
        ("post", "/transactions/index", {"json": {"txHash": 5}}),
        ("post", "/price", {"json": {"tradeType": 5}}),
        ("get", "/app-fees/not-a-wallet/balances", {}),
        ("post", "/app-fees/0x" + "11" * 20 + "/claims", {"json": {}}),
        ("get", "/app-fees/0x" + "11" * 20 + "/claims/0x" + "22" * 32, {}),
        ("post", "/currencies/v2", {"json": {"chainIds": [-1]}}),
        ("get", "/currencies/token/price", {"params": {"chainId": "1", "address": "x"}}),
        ("get", "/config/v2", {"params": {"originChainId": "1"}}),
        ("post", "/fast-fill", {"json": {"requestId": "0x" + "00" * 32}}),
        ("post", "/oif/v1/quotes", {"json": {"user": 5}}),
        ("post", "/oif/v1/orders", {"json": {}}),
        ("get", "/oif/v1/orders/0x" + "00" * 32, {}),
        ("get", "/oif/v1/orders/nope", {}),
    ]
    for method, path, send in attempts:
        response = client.request(method, path, **send)
        schema = _response_schema(document, method, path, response.status_code)
        _validator(document, schema).validate(response.json())
        if path in QUOTE_PATHS:
            validate_against("quote-error", response.json())
            assert response.json()["errorCode"]


@pytest.mark.parametrize(
    "send",
    [
        {"json": {"ttl": "soon"}},
        {"json": {"appFees": "all"}},
        {"json": {"sponsoredFeeComponents": [1]}},
        {"content": b"{not json", "headers": {"content-type": "application/json"}},
    ],
)
def test_quote_body_errors_carry_an_error_code(client, send) -> None:
    response = client.post("/quote/v2", **send)
    assert response.status_code == 400
    assert response.json()["errorCode"] == "INVALID_INPUT"


def test_a_wrong_method_on_a_quote_path_is_a_coded_405(client) -> None:
    response = client.get("/quote/v2")
    assert response.status_code == 405
    assert response.json() == {
        "message": "Method Not Allowed",
        "statusCode": 405,
        "errorCode": "METHOD_NOT_ALLOWED",
    }


@pytest.mark.parametrize(("path", "v2"), [("/requests/v3", False), ("/requests/v2", True)])
def test_every_listing_parameter_is_documented(document, path, v2) -> None:
    documented = {
        parameter["name"]
        for parameter in document["paths"][path]["get"]["parameters"]
        if parameter["in"] == "query"
    }
    names = lq.V2_FIELD_NAMES if v2 else lq.V3_FIELD_NAMES
    ranges = lq.V2_RANGES if v2 else (*lq.INT_RANGES, *lq.USD_RANGES)
    expected = {*names, *ranges, "sortBy", "sortDirection", "limit", "continuation"}
    expected |= {"includeTotal", "includeAuthenticatedData", "includeChildRequests"}
    expected |= {"includeOrderData"} | (set() if v2 else {"features", "filters"})
    assert documented == expected


def test_a_405_allows_every_documented_method_of_the_path(client) -> None:
    assert client.request("PATCH", "/admin/api-keys").headers["allow"] == "GET, POST"
    assert client.request("PATCH", "/admin/webhooks/7").headers["allow"] == "DELETE, GET"
