"""SVM key references: where the solver's SVM keypair comes from (never the deployment file).

env:NAME           the secret key in environment variable NAME: base58 of 64 bytes, or the
                   JSON array of 64 byte values a Solana CLI keypair file holds
keypair:PATH       a Solana CLI keypair file (that JSON array)
devnet-svm:ROLE    a devnet role's keypair (devnet mode only), from the devnet's own keys: the
                   command that runs the devnet passes them in (`DevnetSvmKeys`), as this
                   package never imports the devnet
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import base58
from solders.keypair import Keypair

from crossfill.config.secrets import key_scheme
from crossfill.errors import ConfigError, SecretError
from crossfill.kinds.svm.config import SvmKeyHolder
from crossfill.settings import Mode

_SECRET_KEY_BYTES = 64

# A devnet role's keypair by the name a `devnet-svm:ROLE` reference gives it.
DevnetSvmKeys = Callable[[str], Keypair]


def resolve_svm_keypair(
    ref: str,
    *,
    mode: Mode,
    environ: Mapping[str, str] | None = None,
    devnet_keys: DevnetSvmKeys | None = None,
) -> Keypair:
    """The keypair `ref` points at; `devnet_keys` resolve `devnet-svm:ROLE` (devnet mode only)."""
    environ = os.environ if environ is None else environ
    scheme, target = key_scheme(ref, mode=mode, devnet_scheme="devnet-svm")
    if scheme == "devnet-svm":
        if devnet_keys is None:
            raise SecretError(f"key reference {ref!r} is a devnet key; no devnet keys were given")
        return devnet_keys(target)
    if scheme == "env":
        return _from_text(environ.get(target), f"environment variable {target}")
    if scheme == "keypair":
        try:
            text = Path(target).read_text()
        except OSError as exc:
            raise SecretError(f"cannot read keypair file {target}: {type(exc).__name__}") from None
        return _from_text(text, f"keypair file {target}")
    raise SecretError(f"unknown SVM key reference scheme in {ref!r}")


def resolve_svm_holder(
    holder: SvmKeyHolder, *, mode: Mode, devnet_keys: DevnetSvmKeys | None = None
) -> Keypair:
    """The solver's keypair, checked against its configured address."""
    keypair = resolve_svm_keypair(holder.key, mode=mode, devnet_keys=devnet_keys)
    if str(keypair.pubkey()) != holder.address:
        raise ConfigError("svm solver.key does not belong to svm solver.address")
    return keypair


def _from_text(text: str | None, where: str) -> Keypair:
    if not text:
        raise SecretError(f"{where} is not set")
    text = text.strip()
    try:
        secret = bytes(json.loads(text)) if text.startswith("[") else base58.b58decode(text)
        if len(secret) != _SECRET_KEY_BYTES:
            raise ValueError
        return Keypair.from_bytes(secret)
    except (ValueError, TypeError):
        # Not chained: the library's message can echo the key material.
        raise SecretError(f"{where} does not hold a valid SVM secret key") from None
