"""The deployment file (TOML) loaded into validated models."""

from crossfill.config.deployment import (
    ChainConfig,
    ContractsConfig,
    CurrencyConfig,
    Deployment,
    KeyHolder,
    RebalancingSettings,
    RebalancingTarget,
    RepaymentSettings,
)
from crossfill.config.loader import load_deployment, parse_deployment
from crossfill.domain.confirmations import ConfirmationTier

__all__ = [
    "ChainConfig",
    "ConfirmationTier",
    "ContractsConfig",
    "CurrencyConfig",
    "Deployment",
    "KeyHolder",
    "RebalancingSettings",
    "RebalancingTarget",
    "RepaymentSettings",
    "load_deployment",
    "parse_deployment",
]
