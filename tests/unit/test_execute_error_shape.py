"""POST /execute answers every error with `error` (the spec's `{error}`), other paths do not."""

from __future__ import annotations

from crossfill.api.errors import error_body


def test_execute_errors_carry_error_beside_message() -> None:
    internal = error_body("/execute", 500, "Internal server error")
    assert internal["error"] == internal["message"] == "Internal server error"
    assert error_body("/execute", 401, "no key")["error"] == "no key"
    assert "error" not in error_body("/quote/v2", 400, "bad")
    assert "error" not in error_body("/authorize", 400, "bad")
