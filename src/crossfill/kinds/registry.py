"""Every kind of chain the service serves: one line a kind (see docs/architecture.md, "How to
add a chain kind")."""

from __future__ import annotations

from typing import Any

from crossfill.config.sections import ConfigSection
from crossfill.kinds.evm.kind import EVM
from crossfill.kinds.perps.chain import PERPS
from crossfill.kinds.port import ChainKind
from crossfill.kinds.svm.chain import SVM

KINDS: tuple[ChainKind, ...] = (
    EVM,
    SVM,
    PERPS,
)

# The deployment file's sections of the kinds (`config.sections`).
SECTIONS: tuple[ConfigSection[Any], ...] = tuple(kind.config_section for kind in KINDS)
