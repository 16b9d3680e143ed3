"""The only place that reads the environment. Built once (CLI or app factory), passed down."""

from __future__ import annotations

from enum import StrEnum
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from crossfill.errors import ConfigError


class Mode(StrEnum):
    DEVNET = "devnet"
    PRODUCTION = "production"


class Settings(BaseSettings):
    """Process settings from `CROSSFILL_*` environment variables.

    `home` holds the embedded default's state: the deployment file and the SQLite database.
    Relative to the working directory, so commands run from the checkout share one deployment.
    """

    model_config = SettingsConfigDict(env_prefix="CROSSFILL_", extra="ignore", frozen=True)

    mode: Mode = Mode.DEVNET
    home: Path = Path(".crossfill")
    deployment_file: Path | None = None
    database_url: str | None = None
    # PostgreSQL: a connection attempt or a statement's answer awaited longer than this fails
    # (a 503 to a client, a retried tick to a worker).
    database_timeout_seconds: float = Field(default=5.0, gt=0)
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    # API processes on this host sharing `port`; beyond one they need PostgreSQL (SQLite has
    # a single writer) and, for shared rate limits, Redis.
    api_processes: int = Field(default=1, ge=1, le=64)
    # `crossfill run --workers-only`: serve /metrics, /healthz and /readyz on this port of
    # `host` (unset: no HTTP at all). The API's processes serve them on `port` already.
    ops_port: int | None = Field(default=None, ge=0, le=65535)
    # `crossfill run --workers-only`: how far below the API's the workers' CPU priority is (a
    # `nice` increment, `process.cpu_priority`), so quotes on a shared host do not queue
    # behind a burst's fills; 0: the same priority.
    workers_nice: int = Field(default=10, ge=0, le=19)
    redis_url: str | None = None
    log_format: Literal["console", "json"] | None = None
    log_level: str = "INFO"
    head_poll_interval_seconds: float = Field(default=1.0, gt=0)
    # Subscribe to new heads on each chain's websocket (polling stays the fallback).
    head_subscriptions: bool = True
    rpc_timeout_seconds: float = Field(default=5.0, gt=0)
    worker_interval_seconds: float = Field(default=0.5, gt=0)
    # How long a process's claim to sign with a key on a chain lasts unrenewed: a standby
    # process takes the key over this long after the signing one died (renewed a few times a
    # lease by `kinds.evm.signer_keeper`; a graceful stop hands it over at once).
    signer_lease_seconds: float = Field(default=3.0, gt=0)
    # This worker process's name, unique among those running at a time (unset: none). A
    # process started again under the name takes its leases over from its crashed
    # predecessor at once instead of waiting for them to lapse.
    worker_name: str | None = Field(default=None, min_length=1, max_length=32, pattern=r"^[^@]+$")
    keystore_password: str | None = Field(default=None, repr=False)
    # Operator token for the admin HTTP endpoints (`Authorization: Bearer ...`); unset = off.
    admin_token: str | None = Field(default=None, repr=False)
    # GET /metrics: open unless this token is set (then `Authorization: Bearer ...`).
    metrics_token: str | None = Field(default=None, repr=False)
    # prometheus_client's own variable (it reads it too, when imported): several processes
    # on this host write their values there and any one's /metrics answers for all.
    prometheus_multiproc_dir: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("PROMETHEUS_MULTIPROC_DIR", "prometheus_multiproc_dir"),
    )
    # Token buckets: requests per minute (bursts up to a minute's worth); 0 = unlimited.
    rate_limit_anonymous_per_minute: int = Field(default=600, ge=0)
    rate_limit_key_per_minute: int = Field(default=6000, ge=0)
    # Wrong API keys per client address; once spent, every key from there is refused (429).
    rate_limit_bad_key_per_minute: int = Field(default=30, ge=0)
    # Deposit hints (POST /transactions/index): the RPC calls one client's hints may make per
    # chain and minute (its receipt lookups and their re-checks); past it they are refused.
    hint_rpc_calls_per_client_per_minute: int = Field(default=60, ge=1)
    # Proxies whose `X-Forwarded-For` is believed: comma-separated IPs/CIDRs. Empty: none,
    # the client is the connection's peer.
    trusted_proxies: Annotated[tuple[IPv4Network | IPv6Network, ...], NoDecode] = ()
    # POST /execute without x-api-key (the official SDK sends its key only to its own hosts):
    # off unless both are set. Keyless calls from a client address in these IPs/CIDRs act as
    # the API key with this id: its sponsor wallet and its spend cap.
    keyless_execute_key_id: int | None = Field(default=None, ge=1)
    keyless_execute_clients: Annotated[tuple[IPv4Network | IPv6Network, ...], NoDecode] = ()
    # Webhooks: the secret that encrypts stored signing keys (devnet: a generated file in
    # `home`), whether private/plain-http endpoints are allowed in production, delivery timing.
    webhook_secret: str | None = Field(default=None, repr=False)
    webhook_allow_private: bool = False
    webhook_timeout_seconds: float = Field(default=10.0, gt=0)
    webhook_backoff_base_seconds: float = Field(default=1.0, gt=0)
    webhook_backoff_cap_seconds: float = Field(default=300.0, gt=0)
    webhook_max_retries: int = Field(default=10, ge=0)
    # GET /ws, per process: frame size (the server's limit too), subscriptions per connection,
    # connections per client address, and a token bucket of messages per connection.
    ws_max_message_bytes: int = Field(default=4096, ge=256)
    ws_max_subscriptions: int = Field(default=1000, ge=1)
    ws_max_connections_per_address: int = Field(default=20, ge=1)
    ws_messages_per_second: float = Field(default=20.0, gt=0)
    ws_message_burst: int = Field(default=40, ge=1)
    # Hostile clients: larger requests are refused (413 body, 431 headers) before any route.
    max_request_body_bytes: int = Field(default=256 * 1024, ge=1024)
    max_request_header_count: int = Field(default=100, ge=10)
    max_request_header_bytes: int = Field(default=16 * 1024, ge=1024)
    max_request_header_line_bytes: int = Field(default=8 * 1024, ge=256)
    # Slow clients: a request's headers must arrive within this of the connection (or of its
    # first byte), its body within this of its headers, or it is answered 408 and closed.
    request_header_timeout_seconds: float = Field(default=10.0, gt=0)
    # A stop (SIGTERM, Ctrl-C) of a process serving the API first drains for this long:
    # `/readyz` answers 503 and every answer closes its connection while requests are still
    # served, so a load balancer probing `/readyz` moves clients away before the listener
    # closes (`api.draining`). 0: the listener closes at once.
    drain_seconds: float = Field(default=0.0, ge=0, le=300)
    request_body_timeout_seconds: float = Field(default=30.0, gt=0)
    # GET /requests/v2's monthly reductions: "YYYY-MM-DD:share,..." of the normal limit.
    v2_rate_limit_reductions: str = "2026-09-01:0.5,2026-10-01:0.25,2026-11-01:0.1"

    @field_validator("trusted_proxies", "keyless_execute_clients", mode="before")
    @classmethod
    def _networks(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(
                ip_network(part.strip(), strict=False) for part in value.split(",") if part.strip()
            )
        return value

    @model_validator(mode="after")
    def _absolute_home(self) -> Settings:
        object.__setattr__(self, "home", self.home.expanduser().resolve())
        return self

    @model_validator(mode="after")
    def _several_processes_need_postgres(self) -> Settings:
        if self.api_processes > 1 and not self.database.startswith("postgresql"):
            raise ValueError(
                "api_processes above 1 needs a PostgreSQL CROSSFILL_DATABASE_URL: SQLite has a "
                "single writer, and processes racing for it stall in its busy handler"
            )
        return self

    @property
    def deployment_path(self) -> Path:
        return (self.deployment_file or self.home / "deployment.toml").expanduser().resolve()

    @property
    def database(self) -> str:
        return self.database_url or f"sqlite+aiosqlite:///{self.home / 'crossfill.db'}"

    def secret_values(self) -> tuple[str | None, ...]:
        """The configured secrets, for the log redaction (unset ones are None)."""
        return (self.admin_token, self.metrics_token, self.webhook_secret, self.keystore_password)

    @property
    def json_logs(self) -> bool:
        if self.log_format is not None:
            return self.log_format == "json"
        return self.mode is Mode.PRODUCTION


def load_settings(**overrides: object) -> Settings:
    """Read the environment once; `overrides` (CLI flags) win over it."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise ConfigError(f"invalid setting: {exc}") from exc
