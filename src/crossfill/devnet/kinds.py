"""The kinds of chain a devnet serves: the registry's, the SVM kind resolving `devnet-svm:ROLE`
key references with the devnet's own keys."""

from __future__ import annotations

from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.kinds.port import ChainKind
from crossfill.kinds.registry import KINDS
from crossfill.kinds.svm.chain import SvmKind


def devnet_kinds() -> tuple[ChainKind, ...]:
    return tuple(
        SvmKind(devnet_keys=svm_accounts.by_role) if isinstance(kind, SvmKind) else kind
        for kind in KINDS
    )
