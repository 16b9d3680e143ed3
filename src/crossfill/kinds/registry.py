"""Every kind of chain the service serves: one line a kind (see docs/architecture.md, "How to
add a chain kind")."""

from __future__ import annotations

from crossfill.kinds.evm.kind import EVM
from crossfill.kinds.perps.chain import PERPS
from crossfill.kinds.port import ChainKind
from crossfill.kinds.svm.chain import SVM

KINDS: tuple[ChainKind, ...] = (
    EVM,
    SVM,
    PERPS,
)
