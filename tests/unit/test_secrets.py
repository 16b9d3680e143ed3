"""Key references resolve from the environment or a keystore, and never leak the key."""

from __future__ import annotations

import json

import pytest
from eth_account import Account

from crossfill.config.secrets import devnet_account, resolve_account
from crossfill.errors import SecretError
from crossfill.settings import Mode

KEY = "0x" + "4c" * 32


def test_env_reference_loads_the_key() -> None:
    account = resolve_account("env:SOLVER", mode=Mode.PRODUCTION, environ={"SOLVER": KEY})
    assert account.address == Account.from_key(KEY).address


def test_unset_env_reference_names_the_variable() -> None:
    with pytest.raises(SecretError, match="environment variable SOLVER is not set"):
        resolve_account("env:SOLVER", mode=Mode.PRODUCTION, environ={})


def test_invalid_key_error_does_not_echo_the_value() -> None:
    bogus = "0x" + "zz" * 32
    with pytest.raises(SecretError) as raised:
        resolve_account("env:SOLVER", mode=Mode.PRODUCTION, environ={"SOLVER": bogus})
    assert bogus not in str(raised.value)
    assert raised.value.__cause__ is None


def test_keystore_reference_decrypts_with_the_password(tmp_path) -> None:
    keystore = tmp_path / "solver.json"
    keystore.write_text(
        json.dumps(Account.encrypt(bytes.fromhex(KEY[2:]), "pw", kdf="pbkdf2", iterations=1000))
    )
    account = resolve_account(f"keystore:{keystore}", mode=Mode.PRODUCTION, keystore_password="pw")
    assert account.address == Account.from_key(KEY).address
    with pytest.raises(SecretError, match="cannot decrypt keystore"):
        resolve_account(f"keystore:{keystore}", mode=Mode.PRODUCTION, keystore_password="wrong")


def test_devnet_reference_is_anvils_public_account_and_devnet_only() -> None:
    assert devnet_account(0).address == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    assert resolve_account("devnet:1", mode=Mode.DEVNET).address == devnet_account(1).address
    with pytest.raises(SecretError, match="refused in production"):
        resolve_account("devnet:1", mode=Mode.PRODUCTION)


def test_account_repr_hides_the_key() -> None:
    account = resolve_account("env:SOLVER", mode=Mode.PRODUCTION, environ={"SOLVER": KEY})
    assert KEY[2:] not in repr(account)
