"""Log entries lose every secret, by the entry's name or by the value's shape, whoever logs."""

from __future__ import annotations

import json
import logging

import pytest
import structlog

from crossfill.log_redaction import REDACTED, SecretRedactor
from crossfill.log_setup import configure_logging

API_KEY = "cfk_" + "k" * 43
TOKEN = "operator-token-31f0"


def _redacted(**entry: object) -> dict[str, object]:
    return dict(SecretRedactor([TOKEN, None, "ab"])(None, "info", dict(entry)))


def test_entries_named_like_secrets_lose_their_values() -> None:
    entry = _redacted(
        event="call",
        headers={"accept": "*/*"},
        api_key="anything",
        apiKey="anything",
        authorization="anything",
        webhook_secret="anything",
        private_key="anything",
        nested={"x-api-key": "anything", "chain_id": 1},
        key_id=7,
    )
    assert entry == {
        "event": "call",
        "headers": REDACTED,
        "api_key": REDACTED,
        "apiKey": REDACTED,
        "authorization": REDACTED,
        "webhook_secret": REDACTED,
        "private_key": REDACTED,
        "nested": {"x-api-key": REDACTED, "chain_id": 1},
        "key_id": 7,
    }


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"token {TOKEN} refused", "token [redacted] refused"),
        (f"GET /ws?apiKey={API_KEY}&x=1", "GET /ws?apiKey=[redacted]&x=1"),
        (f"key {API_KEY} revoked", "key cfk_[redacted] revoked"),
        ("Authorization: Bearer abc.def", "Authorization: Bearer [redacted]"),
        ("{'x-api-key': 'guess'}", "{'x-api-key': '[redacted]'}"),
        ("(b'authorization', b'Bearer zz')", "(b'authorization', b'[redacted]')"),
        ("?token=abc&secret=def", "?token=[redacted]&secret=[redacted]"),
        # Secrets too short to hide are left alone rather than garble every line.
        ("about ab", "about ab"),
    ],
)
def test_secret_values_and_shapes_are_scrubbed_from_any_text(text: str, kept: str) -> None:
    assert _redacted(event=text)["event"] == kept


def test_objects_are_scrubbed_as_they_would_be_printed() -> None:
    class Holder:
        def __repr__(self) -> str:
            return f"Holder({TOKEN})"

    assert _redacted(event="x", held=Holder(), items=[API_KEY])["held"] == "Holder([redacted])"
    assert _redacted(event="x", items=(API_KEY,))["items"] == ["cfk_[redacted]"]


@pytest.mark.usefixtures("root_logging")
@pytest.mark.parametrize("json_logs", [True, False])
def test_library_and_structlog_records_pass_the_same_redaction(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, json_logs: bool
) -> None:
    configure_logging(json_logs=json_logs, level="INFO", secrets=[TOKEN])
    # An in-process uvicorn of an earlier test may leave uvicorn's own logging configuration
    # (levels, handlers, no propagation) on these loggers.
    for name in ("uvicorn", "uvicorn.error"):
        configured = logging.getLogger(name)
        monkeypatch.setattr(configured, "level", logging.NOTSET)
        monkeypatch.setattr(configured, "handlers", [])
        monkeypatch.setattr(configured, "propagate", True)
    library = logging.getLogger("uvicorn.error")
    library.info('%s - "WebSocket %s" 403', "127.0.0.1:5000", f"/ws?apiKey={API_KEY}")
    try:
        raise RuntimeError(f"refused {TOKEN}")
    except RuntimeError:
        structlog.get_logger("crossfill.test").exception("failed", api_key=API_KEY)
    logged = capsys.readouterr().err
    assert "/ws?apiKey=[redacted]" in logged and "RuntimeError: refused [redacted]" in logged
    assert API_KEY not in logged and TOKEN not in logged
    if json_logs:
        lines = [json.loads(line) for line in logged.splitlines()]
        assert [line["logger"] for line in lines] == ["uvicorn.error", "crossfill.test"]
