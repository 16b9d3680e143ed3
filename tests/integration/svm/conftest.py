"""A devnet SVM node per test module (seeded)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from crossfill.devnet.svm.process import SvmNodeOptions, SvmNodeProcess, start_svm_node
from crossfill.devnet.svm.seed import SeededSvm, seed_svm

# Short slots and a short blockhash window, so expiry is seen within a test.
TEST_OPTIONS = SvmNodeOptions(slot_ms=100, blockhash_valid_slots=20)


@pytest.fixture(scope="module")
def svm_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SvmNodeProcess]:
    node = start_svm_node(log_dir=Path(tmp_path_factory.mktemp("svm")), options=TEST_OPTIONS)
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="module")
def seeded(svm_node: SvmNodeProcess) -> SeededSvm:
    return seed_svm(svm_node.rpc_url)
