"""Which custom headers a webhook endpoint may carry; checked when the endpoint is set.

Names are RFC 7230 tokens, compared without case. Values are visible ASCII with spaces or
tabs inside; surrounding spaces and tabs are dropped (HTTP ignores them anyway, RFC 7230
3.2.4), anything else (CR, LF, NUL, other control or non-ASCII characters) is refused: it
would split the header block or fail to encode at every delivery. Hop-by-hop headers concern
one connection, not the delivery, and the headers the dispatcher sets itself cannot be
overridden. The limits keep each delivery's header block small.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from crossfill.webhooks.signing import EVENT_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER

MAX_HEADERS = 20
MAX_NAME_LENGTH = 64
MAX_VALUE_LENGTH = 1024
# Counted as on the wire: "Name: value\r\n" for each header.
MAX_TOTAL_BYTES = 8192

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
# What the dispatcher (or httpx for it) puts on every delivery, and what describes the body.
SET_BY_SERVICE = frozenset(
    {
        "host",
        "content-length",
        "content-type",
        "content-encoding",
        "expect",
        "user-agent",
        TIMESTAMP_HEADER.lower(),
        SIGNATURE_HEADER.lower(),
        EVENT_ID_HEADER.lower(),
    }
)

TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
VALUE_CHARACTER = re.compile(r"[\x20-\x7e\t]")
TOKEN_CHARACTERS = "ASCII letters, digits and !#$%&'*+-.^_`|~"


class HeaderRefused(ValueError):
    """A custom header breaks a rule; the message names the header and the rule."""


def _shown(name: str) -> str:
    """The name as messages quote it: escaped, and cut short when it is very long."""
    return repr(name if len(name) <= MAX_NAME_LENGTH else name[:MAX_NAME_LENGTH] + "...")


def _checked_name(name: str, seen: dict[str, str]) -> None:
    shown = _shown(name)
    if not name:
        raise HeaderRefused("header '': a header name may not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise HeaderRefused(f"header {shown}: the name is longer than {MAX_NAME_LENGTH} characters")
    if not TOKEN.fullmatch(name):
        raise HeaderRefused(f"header {shown}: the name may hold only {TOKEN_CHARACTERS}")
    lowered = name.lower()
    if lowered in HOP_BY_HOP:
        raise HeaderRefused(f"header {shown}: hop-by-hop headers cannot be set")
    if lowered in SET_BY_SERVICE:
        raise HeaderRefused(f"header {shown}: it is set by the service")
    if lowered in seen:
        raise HeaderRefused(
            f"header {shown}: given twice (as {seen[lowered]!r}; names ignore case)"
        )
    seen[lowered] = name


def _checked_value(name: str, value: str) -> str:
    trimmed = value.strip(" \t")
    if len(trimmed) > MAX_VALUE_LENGTH:
        raise HeaderRefused(
            f"header {_shown(name)}: the value is longer than {MAX_VALUE_LENGTH} characters"
        )
    for position, character in enumerate(trimmed):
        if not VALUE_CHARACTER.fullmatch(character):
            raise HeaderRefused(
                f"header {_shown(name)}: the value may hold only visible ASCII, spaces and "
                f"tabs ({character!r} at position {position})"
            )
    return trimmed


def check_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers as they will be sent (values trimmed), or `HeaderRefused` saying why not."""
    pairs = list(headers)
    if len(pairs) > MAX_HEADERS:
        raise HeaderRefused(f"at most {MAX_HEADERS} custom headers (got {len(pairs)})")
    seen: dict[str, str] = {}
    accepted: dict[str, str] = {}
    for name, value in pairs:
        _checked_name(name, seen)
        accepted[name] = _checked_value(name, value)
    total = sum(len(name) + len(value) + 4 for name, value in accepted.items())
    if total > MAX_TOTAL_BYTES:
        raise HeaderRefused(
            f"custom headers take {total} bytes with their separators; at most {MAX_TOTAL_BYTES}"
        )
    return accepted
