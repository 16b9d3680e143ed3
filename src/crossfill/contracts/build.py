"""Compile the Solidity sources with the pinned npm `solc` (standard JSON) into artifacts.

Artifacts are build outputs (git-ignored): one JSON file per contract with its ABI and bytecode,
plus the Uniswap V2 contracts copied as-is from their npm packages. A stamp of the inputs makes
a rebuild with unchanged sources a no-op.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from crossfill.contracts.toolchain import ARTIFACTS_DIR, SOLIDITY_DIR, node_modules_dir
from crossfill.errors import ContractBuildError

OUR_CONTRACTS = (
    "Depository",
    "DepositAddress",
    "DepositAddressFactory",
    "Filler",
    "Receiver",
    "Router",
    "ApprovalProxy",
    "Multicaller",
    "OnlyOwnerMulticaller",
    "TestUSDC",
    "WETH",
    # ERC-7683 settlers (docs/erc7683.md).
    "CrossfillOriginSettler",
    "CrossfillDestinationSettler",
    # Devnet only: a vault for bridge-and-call, a Chainlink-style feed for price tests, an
    # on-chain check of request attestations, an EIP-7702 batch delegate for gasless calls.
    "TestVault",
    "TestPriceFeed",
    "AttestationVerifier",
    "BatchDelegate",
    # External solvers' bonds (docs/solvers.md).
    "SolverBond",
)
UNISWAP_ARTIFACTS = {
    "UniswapV2Factory": "@uniswap/v2-core/build/UniswapV2Factory.json",
    "UniswapV2Pair": "@uniswap/v2-core/build/UniswapV2Pair.json",
    "UniswapV2Router02": "@uniswap/v2-periphery/build/UniswapV2Router02.json",
}
EVM_VERSION = "prague"
STAMP_FILE = ".inputs-sha256"
COMPILE_SCRIPT = Path(__file__).with_name("solc_compile.cjs")


def _sources() -> dict[str, dict[str, str]]:
    return {
        path.relative_to(SOLIDITY_DIR).as_posix(): {"content": path.read_text()}
        for path in sorted(SOLIDITY_DIR.rglob("*.sol"))
    }


def _standard_input(sources: dict[str, dict[str, str]]) -> dict[str, object]:
    return {
        "language": "Solidity",
        "sources": sources,
        "settings": {
            "optimizer": {"enabled": True, "runs": 200},
            "evmVersion": EVM_VERSION,
            "outputSelection": {
                "*": {"*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"]}
            },
        },
    }


def _run_solc(node_modules: Path, standard_input: dict[str, object]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="crossfill-solc-") as workdir:
        input_path = Path(workdir) / "input.json"
        output_path = Path(workdir) / "output.json"
        input_path.write_text(json.dumps(standard_input))
        completed = subprocess.run(
            ["node", str(COMPILE_SCRIPT), str(node_modules), str(input_path), str(output_path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if completed.returncode != 0:
            raise ContractBuildError(f"solc failed: {completed.stderr.strip()}")
        output: dict[str, object] = json.loads(output_path.read_text())
    return output


def _check_errors(output: dict[str, object]) -> None:
    diagnostics = output.get("errors", [])
    assert isinstance(diagnostics, list)
    errors = [d["formattedMessage"] for d in diagnostics if d.get("severity") == "error"]
    if errors:
        raise ContractBuildError("Solidity compilation failed:\n" + "\n".join(errors))


def _write_ours(output: dict[str, object]) -> None:
    contracts = output["contracts"]
    assert isinstance(contracts, dict)
    by_name = {name: body for unit in contracts.values() for name, body in unit.items()}
    for name in OUR_CONTRACTS:
        compiled = by_name[name]
        artifact = {
            "contractName": name,
            "abi": compiled["abi"],
            "bytecode": "0x" + compiled["evm"]["bytecode"]["object"],
            "deployedBytecode": "0x" + compiled["evm"]["deployedBytecode"]["object"],
        }
        (ARTIFACTS_DIR / f"{name}.json").write_text(json.dumps(artifact, indent=1))


def _copy_uniswap(node_modules: Path) -> None:
    for name, relative in UNISWAP_ARTIFACTS.items():
        shipped = json.loads((node_modules / relative).read_text())
        bytecode = shipped["bytecode"]
        artifact = {
            "contractName": name,
            "abi": shipped["abi"],
            "bytecode": bytecode if bytecode.startswith("0x") else "0x" + bytecode,
        }
        (ARTIFACTS_DIR / f"{name}.json").write_text(json.dumps(artifact, indent=1))


def _inputs_digest(node_modules: Path, sources: dict[str, dict[str, str]]) -> str:
    solc_version = json.loads((node_modules / "solc" / "package.json").read_text())["version"]
    hasher = hashlib.sha256(solc_version.encode())
    hasher.update(json.dumps(_standard_input(sources), sort_keys=True).encode())
    for relative in UNISWAP_ARTIFACTS.values():
        hasher.update((node_modules / relative).read_bytes())
    return hasher.hexdigest()


def build(force: bool = False) -> bool:
    """Compile when the inputs changed; return whether anything was rebuilt."""
    node_modules = node_modules_dir()
    sources = _sources()
    digest = _inputs_digest(node_modules, sources)
    stamp = ARTIFACTS_DIR / STAMP_FILE
    if not force and stamp.exists() and stamp.read_text() == digest:
        return False
    output = _run_solc(node_modules, _standard_input(sources))
    _check_errors(output)
    ARTIFACTS_DIR.mkdir(exist_ok=True)
    _write_ours(output)
    _copy_uniswap(node_modules)
    stamp.write_text(digest)
    return True


if __name__ == "__main__":
    try:
        rebuilt = build(force="--force" in sys.argv)
    except ContractBuildError as exc:
        sys.exit(str(exc))
    print("contracts compiled" if rebuilt else "contracts up to date")
