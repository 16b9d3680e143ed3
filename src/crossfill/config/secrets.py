"""Key references: where a private key comes from. Keys never live in the deployment file.

env:NAME           the hex key in environment variable NAME
keystore:PATH      an encrypted JSON keystore; its password in CROSSFILL_KEYSTORE_PASSWORD
devnet:N           account N of anvil's public test mnemonic (devnet mode only)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Protocol

from eth_account import Account
from eth_account.signers.local import LocalAccount
from pydantic import AfterValidator

from crossfill.errors import ConfigError, SecretError
from crossfill.settings import Mode

# Anvil's well-known, public development mnemonic: devnet accounts hold only devnet funds.
DEVNET_MNEMONIC = "test test test test test test test test test test test junk"


def key_reference(pattern: str, forms: str) -> Callable[[str], str]:
    """A check that a value is a key reference of the given forms (`pattern`; `forms` names
    them in the error), never a key itself."""
    form = re.compile(pattern)

    def checked(value: str) -> str:
        if not form.match(value):
            raise ValueError(f"must be {forms}; private keys never go in the deployment file")
        return value

    return checked


KeyRef = Annotated[
    str,
    AfterValidator(
        key_reference(
            r"^(env:[A-Za-z_][A-Za-z0-9_]*|keystore:.+|devnet:\d{1,3})$",
            "a key reference (env:NAME, keystore:PATH or devnet:N)",
        )
    ),
]


class KeyHolder(Protocol):
    """A role's address and key reference (`config.KeyHolder`, `[perps].solver`)."""

    @property
    def address(self) -> str: ...

    @property
    def key(self) -> str: ...


def devnet_account(index: int) -> LocalAccount:
    Account.enable_unaudited_hdwallet_features()
    account: LocalAccount = Account.from_mnemonic(
        DEVNET_MNEMONIC, account_path=f"m/44'/60'/0'/0/{index}"
    )
    return account


def key_scheme(ref: str, *, mode: Mode, devnet_scheme: str) -> tuple[str, str]:
    """`ref` as its scheme and target; a reference to a devnet key (`devnet_scheme`) is
    refused outside devnet mode."""
    scheme, _, target = ref.partition(":")
    if scheme == devnet_scheme and mode is not Mode.DEVNET:
        raise SecretError(f"key reference {ref!r} is a devnet key, refused in {mode} mode")
    return scheme, target


def resolve_account(
    ref: str,
    *,
    mode: Mode,
    environ: Mapping[str, str] | None = None,
    keystore_password: str | None = None,
) -> LocalAccount:
    """Load the account a key reference points at; the key itself is never logged."""
    environ = os.environ if environ is None else environ
    scheme, target = key_scheme(ref, mode=mode, devnet_scheme="devnet")
    if scheme == "devnet":
        return devnet_account(int(target))
    if scheme == "env":
        return _from_hex(environ.get(target), f"environment variable {target}")
    if scheme == "keystore":
        return _from_keystore(Path(target), keystore_password)
    raise SecretError(f"unknown key reference scheme in {ref!r}")


def resolve_holder(
    holder: KeyHolder, role: str, *, mode: Mode, keystore_password: str | None = None
) -> LocalAccount:
    """The account of a role (`solver`, `allocator`, `perps.solver`), checked against its
    configured address."""
    account = resolve_account(holder.key, mode=mode, keystore_password=keystore_password)
    if account.address.lower() != holder.address.lower():
        raise ConfigError(f"{role}.key does not belong to {role}.address")
    return account


def _from_hex(key: str | None, where: str) -> LocalAccount:
    if not key:
        raise SecretError(f"{where} is not set")
    try:
        account: LocalAccount = Account.from_key(key)
    except (ValueError, TypeError):
        # Not chained: the library's message can echo the key material.
        raise SecretError(f"{where} does not hold a valid private key") from None
    return account


def _from_keystore(path: Path, password: str | None) -> LocalAccount:
    if password is None:
        raise SecretError("keystore password missing: set CROSSFILL_KEYSTORE_PASSWORD")
    try:
        encrypted = json.loads(path.read_text())
        key = Account.decrypt(encrypted, password)
    except (OSError, ValueError) as exc:
        raise SecretError(f"cannot decrypt keystore {path}: {type(exc).__name__}") from None
    account: LocalAccount = Account.from_key(key)
    return account
