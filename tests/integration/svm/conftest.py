"""A devnet SVM node per test module (seeded), and a plain JSON-RPC caller for it."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import Message
from solders.transaction import VersionedTransaction

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


def rpc_reply(url: str, method: str, *params: Any) -> dict[str, Any]:
    reply: dict[str, Any] = httpx.post(
        url, json={"jsonrpc": "2.0", "id": 7, "method": method, "params": list(params)}
    ).json()
    return reply


def rpc(url: str, method: str, *params: Any) -> Any:
    reply = rpc_reply(url, method, *params)
    assert "error" not in reply, reply
    return reply["result"]


def signed(
    url: str, instructions: list[Instruction], signers: list[Keypair], blockhash: str | None = None
) -> VersionedTransaction:
    if blockhash is None:
        blockhash = rpc(url, "getLatestBlockhash")["value"]["blockhash"]
    message = Message.new_with_blockhash(
        instructions, signers[0].pubkey(), Hash.from_string(blockhash)
    )
    return VersionedTransaction(message, signers)


def encoded(tx: VersionedTransaction) -> str:
    return base64.b64encode(bytes(tx)).decode()
