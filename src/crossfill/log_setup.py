"""structlog configuration: JSON lines in production, readable console output on the devnet."""

from __future__ import annotations

import logging

import structlog


def configure_logging(*, json_logs: bool, level: str = "INFO") -> None:
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json_logs else structlog.dev.ConsoleRenderer()
    )
    if json_logs:
        processors.append(structlog.processors.format_exc_info)
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=level.upper(), format="%(message)s")
    # Per-request chatter of libraries we call on every poll.
    for noisy in ("httpx", "httpcore", "alembic", "web3", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
