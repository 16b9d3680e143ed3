"""A command's settings: the environment's, with the command's options over them."""

from __future__ import annotations

from crossfill.log_setup import configure_logging
from crossfill.settings import Settings, load_settings


def command_settings(**overrides: object) -> Settings:
    """The settings with the options given (None: not given), logging configured from them."""
    settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
    configure_logging(
        json_logs=settings.json_logs, level=settings.log_level, secrets=settings.secret_values()
    )
    return settings
