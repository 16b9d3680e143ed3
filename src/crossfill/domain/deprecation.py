"""The deprecated `GET /requests/v2`: its phases by date (spec "Versioning").

Deprecated (headers) from July 22, 2026; its rate limit reduced each month from Sep 1, 2026;
retired (410 Gone) from Nov 24, 2026. The reductions are configurable.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.utils import format_datetime

DEPRECATED_ON = date(2026, 7, 22)
RETIRED_ON = date(2026, 11, 24)
# From each date, v2 gets this share of the normal rate limit.
DEFAULT_REDUCTIONS = "2026-09-01:0.5,2026-10-01:0.25,2026-11-01:0.1"
SUCCESSOR = "/requests/v3"


def parse_reductions(text: str) -> tuple[tuple[date, float], ...]:
    """`YYYY-MM-DD:share,...` → sorted (date, share) pairs; shares in (0, 1]."""
    pairs = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        day, _, share = part.partition(":")
        value = float(share)
        if not 0 < value <= 1:
            raise ValueError(f"rate-limit share must be in (0, 1], got {share!r}")
        pairs.append((date.fromisoformat(day), value))
    return tuple(sorted(pairs))


@dataclass(frozen=True)
class V2Schedule:
    reductions: tuple[tuple[date, float], ...] = parse_reductions(DEFAULT_REDUCTIONS)
    deprecated_on: date = DEPRECATED_ON
    retired_on: date = RETIRED_ON

    def retired(self, now: datetime) -> bool:
        return now.date() >= self.retired_on

    def deprecated(self, now: datetime) -> bool:
        return now.date() >= self.deprecated_on

    def rate_share(self, now: datetime) -> float:
        share = 1.0
        for day, value in self.reductions:
            if now.date() >= day:
                share = value
        return share

    def headers(self, now: datetime) -> dict[str, str]:
        if not self.deprecated(now):
            return {}
        sunset = datetime(
            self.retired_on.year, self.retired_on.month, self.retired_on.day, tzinfo=UTC
        )
        return {
            "Deprecation": "true",
            "Sunset": format_datetime(sunset, usegmt=True),
            "Link": f'<{SUCCESSOR}>; rel="successor-version"',
        }
