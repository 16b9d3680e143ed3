"""Logging configuration: JSON lines in production, readable console output on the devnet.

Everything goes through one handler on the root logger, to stderr: our structlog entries and
the standard-library records of libraries (uvicorn, SQLAlchemy, ...) alike, so both pass the
same secret redaction and come out in the same format. Tracebacks are plain text, rendered
before redaction: a pretty traceback with local variables printed request headers (API keys,
the operator token) and blocked the event loop for seconds on every 500.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable

import structlog

from crossfill.log_redaction import SecretRedactor

_HANDLER_NAME = "crossfill"
# Per-request chatter of libraries we call on every poll.
_NOISY_LIBRARIES = ("httpx", "httpcore", "alembic", "web3", "urllib3")


def configure_logging(
    *, json_logs: bool, level: str = "INFO", secrets: Iterable[str | None] = ()
) -> None:
    """Send every log entry to stderr, rendered as JSON or for the console.

    `secrets` are values that must never appear in a log line (the operator token, the
    webhook secret, ...): they are replaced wherever they occur. Calling again replaces the
    previous configuration.
    """
    numeric_level = logging.getLevelName(level.upper())
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_logger_name,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
        cache_logger_on_first_use=True,
    )
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_logs
        else structlog.dev.ConsoleRenderer(exception_formatter=structlog.dev.plain_traceback)
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                SecretRedactor(secrets),
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    for previous in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(previous)
    root.addHandler(handler)
    root.setLevel(numeric_level)
    for noisy in _NOISY_LIBRARIES:
        logging.getLogger(noisy).setLevel(logging.WARNING)
