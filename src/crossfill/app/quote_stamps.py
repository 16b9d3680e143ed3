"""A new quote's stamp (`quoting.cross_vm.QuoteStamp`): made now, standing for the request's
`ttl` within the deployment's bounds, under a fresh random request id and order salt."""

from __future__ import annotations

import os
import secrets
from datetime import UTC, datetime

from crossfill.config.deployment import QuoteSettings
from crossfill.quoting import inputs
from crossfill.quoting.cross_vm import QuoteStamp
from crossfill.quoting.request import QuoteRequest


def fresh_stamp(body: QuoteRequest, quotes: QuoteSettings, *, solver: str) -> QuoteStamp:
    return QuoteStamp(
        now=datetime.now(UTC),
        ttl=inputs.ttl(body.ttl, quotes),
        request_id=os.urandom(32),
        salt=secrets.randbits(256),
        solver=solver,
    )
