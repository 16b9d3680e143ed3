"""A command's settings (the environment's, with the command's options over them) and the
deployment file they name."""

from __future__ import annotations

from pathlib import Path

from crossfill.config import Deployment, load_deployment
from crossfill.log_setup import configure_logging
from crossfill.settings import Settings, load_settings


def command_settings(**overrides: object) -> Settings:
    """The settings with the options given (None: not given), logging configured from them."""
    settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
    configure_logging(
        json_logs=settings.json_logs, level=settings.log_level, secrets=settings.secret_values()
    )
    return settings


def command_deployment(settings: Settings, path: Path | None = None) -> Deployment:
    """The deployment file (the settings' own, or `path`), with every served kind's section."""
    # The registry imports every kind's workers: only a command that reads the file pays it.
    from crossfill.kinds.registry import SECTIONS

    return load_deployment(path or settings.deployment_path, mode=settings.mode, sections=SECTIONS)
