"""The deployment file (TOML) loaded into validated models."""

from crossfill.config.deployment import (
    ChainConfig,
    ConfirmationTier,
    ContractsConfig,
    CurrencyConfig,
    Deployment,
    KeyHolder,
)
from crossfill.config.loader import load_deployment, parse_deployment

__all__ = [
    "ChainConfig",
    "ConfirmationTier",
    "ContractsConfig",
    "CurrencyConfig",
    "Deployment",
    "KeyHolder",
    "load_deployment",
    "parse_deployment",
]
