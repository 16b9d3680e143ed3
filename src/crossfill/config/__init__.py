"""The deployment file (TOML) loaded into validated models."""

from crossfill.config.deployment import (
    Deployment,
    KeyHolder,
    RebalancingSettings,
    RebalancingTarget,
    RepaymentSettings,
)
from crossfill.config.loader import load_deployment, parse_deployment
from crossfill.domain.confirmations import ConfirmationTier

__all__ = [
    "ConfirmationTier",
    "Deployment",
    "KeyHolder",
    "RebalancingSettings",
    "RebalancingTarget",
    "RepaymentSettings",
    "load_deployment",
    "parse_deployment",
]
