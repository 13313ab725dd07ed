"""Service configuration, from arguments or the environment (BATHTUB_*)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from functools import cached_property


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
    base_url: str = ""  # the public URL returned links start with; default from host and port
    token_cache_seconds: float = 2.0  # how long a token lookup is trusted; bounds revocation delay
    bad_token_limit_per_minute: int = 30  # per client address: guessing tokens is slowed to this

    @cached_property
    def public_base_url(self) -> str:
        """Where returned URLs point: `base_url`, else this service's own host and port —
        never the request's Host header, which the client chooses."""
        if self.base_url:
            return self.base_url.rstrip("/")
        host = self.host
        if host in ("", "0.0.0.0", "::"):  # listening everywhere: name the machine
            host = socket.getfqdn()
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

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
            ("bad_token_limit_per_minute", "BATHTUB_BAD_TOKEN_LIMIT", int),
            ("max_body_bytes", "BATHTUB_MAX_BODY_BYTES", int),
            ("job_concurrency", "BATHTUB_JOB_CONCURRENCY", int),
            ("host", "BATHTUB_HOST", str),
            ("port", "BATHTUB_PORT", int),
            ("base_url", "BATHTUB_BASE_URL", str),
        ):
            if name in env:
                values[key] = conv(env[name])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
