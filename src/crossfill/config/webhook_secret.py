"""The secret that encrypts webhook signing keys at rest (Fernet: AES-128-CBC + HMAC).

`CROSSFILL_WEBHOOK_SECRET` (any string; the Fernet key is derived from it) in production. In
devnet mode, when unset, a random secret is generated once into `<home>/webhook-secret` (0600)
so the embedded default works without configuration.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from crossfill.errors import ConfigError, SecretError
from crossfill.settings import Mode, Settings

SECRET_FILE = "webhook-secret"


def _fernet(secret: str) -> Fernet:
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest()))


def _devnet_secret(home: Path) -> str:
    path = home / SECRET_FILE
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(32))
    return path.read_text().strip()


class SigningKeyBox:
    """Encrypts and decrypts API keys kept for signing webhooks."""

    def __init__(self, secret: str) -> None:
        self._fernet = _fernet(secret)

    @classmethod
    def from_settings(cls, settings: Settings) -> SigningKeyBox:
        if settings.webhook_secret:
            return cls(settings.webhook_secret)
        if settings.mode is Mode.DEVNET:
            return cls(_devnet_secret(settings.home))
        raise ConfigError("webhooks need CROSSFILL_WEBHOOK_SECRET in production mode")

    def seal(self, api_key: str) -> str:
        return self._fernet.encrypt(api_key.encode()).decode()

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken as exc:
            raise SecretError("webhook signing key does not decrypt: wrong webhook secret") from exc
