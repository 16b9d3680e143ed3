"""Where the pinned npm toolchain (solc, anvil, Uniswap artifacts) lives on this machine."""

from __future__ import annotations

from pathlib import Path

from crossfill.errors import ToolchainMissing

PACKAGE_DIR = Path(__file__).resolve().parent
SOLIDITY_DIR = PACKAGE_DIR / "solidity"
ARTIFACTS_DIR = PACKAGE_DIR / "compiled"


def node_modules_dir() -> Path:
    """The `node_modules` of the checkout this package was installed from (or the cwd's)."""
    for start in (PACKAGE_DIR, Path.cwd()):
        for folder in (start, *start.parents):
            candidate = folder / "node_modules"
            if (candidate / "solc").is_dir():
                return candidate
    raise ToolchainMissing("node_modules with solc not found: run `make deps` (npm ci) first")


def anvil_binary() -> Path:
    """The anvil binary shipped by npm `@foundry-rs/anvil` for this platform."""
    for binary in sorted(node_modules_dir().glob("@foundry-rs/anvil-*/bin/anvil")):
        if binary.is_file():
            return binary
    raise ToolchainMissing("anvil binary not found under node_modules/@foundry-rs: run `make deps`")
