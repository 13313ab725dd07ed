"""Service configuration, from arguments or the environment (BATHTUB_*)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Config:
    """Everything the app factory needs; defaults give a zero-set-up embedded service."""

    database_url: str = "sqlite:///bathtub.sqlite3"
    host: str = "127.0.0.1"
    port: int = 8080
    rate_limit_per_minute: int = 120
    max_body_bytes: int = 32 * 1024 * 1024
    job_concurrency: int = 2
    job_retention_days: float = 7.0
    cpu_workers: int = field(default_factory=lambda: max(1, (os.cpu_count() or 2) - 1))
    base_url: str = ""
    token_cache_seconds: float = 2.0  # how long a token lookup is trusted; bounds revocation delay
    # How long an Idempotency-Key is remembered (with its request's hash and first answer):
    # a retry within this time replays the answer; after it the key is purged and free again.
    idempotency_key_hours: float = 24.0

    @classmethod
    def from_env(cls, **overrides: object) -> Config:
        env = os.environ
        values: dict[str, object] = {}
        if "BATHTUB_DATABASE_URL" in env:
            values["database_url"] = env["BATHTUB_DATABASE_URL"]
        elif "BATHTUB_DB_PATH" in env:
            values["database_url"] = "sqlite:///" + env["BATHTUB_DB_PATH"]
        for key, name, conv in (
            ("rate_limit_per_minute", "BATHTUB_RATE_LIMIT", int),
            ("max_body_bytes", "BATHTUB_MAX_BODY_BYTES", int),
            ("job_concurrency", "BATHTUB_JOB_CONCURRENCY", int),
            ("host", "BATHTUB_HOST", str),
            ("port", "BATHTUB_PORT", int),
            ("base_url", "BATHTUB_BASE_URL", str),
            ("idempotency_key_hours", "BATHTUB_IDEMPOTENCY_KEY_HOURS", float),
        ):
            if name in env:
                values[key] = conv(env[name])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
