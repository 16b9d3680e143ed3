"""Scrubbing secrets out of log entries, whoever logged them (our code or a library).

Two nets, because neither alone is enough: entries whose *name* says secret (`api_key=`,
`headers=`, `authorization=` ...) lose their value whatever it is, and every string in an entry
(the message, a rendered traceback, a library's formatted line) loses the secret *values* the
process knows (operator token, webhook secret, keystore password) and anything shaped like an
API key, a bearer token or a secret query parameter (`GET /ws?apiKey=...`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from structlog.typing import EventDict, WrappedLogger

REDACTED = "[redacted]"
# Secrets shorter than this are not scrubbed by value: replacing every "ab" would garble the
# logs while hiding nothing worth hiding.
MIN_SECRET_LENGTH = 4

# Compared with the entry's name lower-cased and without `-`/`_`: `x-api-key`, `apiKey`,
# `api_key` are all `xapikey`/`apikey`.
_SECRET_NAME_PARTS = (
    "authorization",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "privatekey",
    "signingkey",
    "cookie",
    "credential",
    "headers",
)
_SHAPED_SECRETS = (
    # Our API keys (`cfk_` + 43 url-safe characters), wherever they appear.
    (re.compile(r"cfk_[A-Za-z0-9_-]{8,}"), "cfk_" + REDACTED),
    # `Authorization: Bearer <token>` and the like.
    (re.compile(r"(?i)\b(bearer|basic)\s+[^\s\"',;]+"), r"\1 " + REDACTED),
    # Query strings and form bodies: `?apiKey=...&token=...`.
    (
        re.compile(
            r"(?i)\b((?:x-)?api[-_]?key|[a-z_]*token|[a-z_]*secret|password|signature)"
            r"=[^&\s\"'#]+"
        ),
        r"\1=" + REDACTED,
    ),
    # A header next to its value in a dumped mapping or ASGI scope: `'x-api-key': '...'`,
    # `(b'authorization', b'...')`.
    (
        re.compile(
            r"(?i)(b?['\"](?:x-api-key|authorization|cookie|set-cookie)['\"]\s*[:,]\s*b?['\"])"
            r"[^'\"]*"
        ),
        r"\1" + REDACTED,
    ),
)


def is_secret_name(name: str) -> bool:
    normalized = name.lower().replace("-", "").replace("_", "")
    return any(part in normalized for part in _SECRET_NAME_PARTS)


class SecretRedactor:
    """A structlog processor; run it after exceptions are rendered to text, before rendering.

    Values that are neither strings, numbers nor containers are turned into their `repr`
    first, so what the renderer would print of them is scrubbed too.
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        known = sorted(
            {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True
        )
        self._known = re.compile("|".join(map(re.escape, known))) if known else None

    def __call__(self, _logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
        return {name: self._entry(name, value) for name, value in event_dict.items()}

    def _entry(self, name: object, value: object) -> object:
        if isinstance(name, str) and is_secret_name(name) and value is not None:
            return REDACTED
        return self._value(value)

    def _value(self, value: object) -> Any:
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict):
            return {key: self._entry(key, item) for key, item in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self._value(item) for item in value]
        return self.scrub(repr(value))

    def scrub(self, text: str) -> str:
        if self._known is not None:
            text = self._known.sub(REDACTED, text)
        for pattern, replacement in _SHAPED_SECRETS:
            text = pattern.sub(replacement, text)
        return text
