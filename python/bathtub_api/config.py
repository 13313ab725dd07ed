"""Service configuration, from arguments or the environment (BATHTUB_*)."""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from bathtub.imports.images import PIXEL_CEILING

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def default_db_path() -> str:
    """The per-user SQLite file, the same wherever `bathtub` runs from (so a token made in one
    directory works for a service started in another): $BATHTUB_DB_PATH, else
    $XDG_DATA_HOME/bathtub/bathtub.sqlite3, else ~/.local/share/bathtub/bathtub.sqlite3."""
    if os.environ.get("BATHTUB_DB_PATH"):
        return os.path.abspath(os.environ["BATHTUB_DB_PATH"])
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(os.path.abspath(base), "bathtub", "bathtub.sqlite3")


def parse_networks(entries: Sequence[str], name: str) -> tuple[Network, ...]:
    """Addresses or CIDR networks (`10.0.0.0/8`, `::1`); a ValueError naming `name` for any other."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{name}: {entry.strip()!r} is not an IP address or CIDR network "
                             "(for example 10.0.0.5 or 10.0.0.0/8)") from None
    return tuple(networks)


def _comma_list(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


@dataclass(frozen=True)
class Config:
    """Everything the app factory needs; defaults give a zero-set-up embedded service."""

    database_url: str = field(default_factory=lambda: "sqlite:///" + default_db_path())
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 1  # service processes on the port (bathtub_api/workers.py); each its own pool and jobs
    rate_limit_per_minute: int = 120
    max_body_bytes: int = 32 * 1024 * 1024
    job_concurrency: int = 2
    job_retention_days: float = 7.0
    cpu_workers: int = field(default_factory=lambda: max(1, (os.cpu_count() or 2) - 1))
    base_url: str = ""  # the public URL returned links start with; default from host and port
    token_cache_seconds: float = 2.0  # how long a token lookup is trusted; bounds revocation delay
    # Where uploaded files wait for import (deleted once imported or after upload_retention_s) and
    # cleaned photos live. Empty: beside the SQLite file, or ./bathtub-files for PostgreSQL.
    # Several service processes must share it (a common volume).
    data_dir: str = ""
    upload_base_url: str = ""  # the direct upload host for `url`; empty: the main base URL
    upload_max_bytes: int = 30 * 1024 * 1024
    upload_link_seconds: float = 15 * 60.0
    upload_retention_s: float = 3600.0
    upload_max_attempts: int = 10  # wrong-token sends to one link before it answers 429
    photo_max_bytes: int = 20 * 1024 * 1024
    # Photo decoding bounds the service's memory (bathtub_api/photo_decoder.py): at most
    # photo_decodes at once, each on one of that many threads; a photo waits up to
    # photo_decode_wait_s for a turn, then is refused with 503 and Retry-After. A decode holds at
    # most one full-size buffer of 4 bytes a pixel, so photo_max_pixels bounds it; photos are
    # kept at most photo_max_edge pixels on their longest side (0: full size), and a JPEG larger
    # than that is decoded at 1/2, 1/4 or 1/8 scale.
    photo_decodes: int = 2
    photo_decode_wait_s: float = 30.0
    photo_max_pixels: int = 64_000_000
    photo_max_edge: int = 3840
    # Alert email: smtp://[user:pass@]host[:port] (STARTTLS when offered) or smtps://...; empty: mails
    # stay queued in the outbox (nothing is lost) until a server is configured.
    smtp_url: str = ""
    smtp_from: str = "bathtub@localhost"
    mail_poll_s: float = 2.0
    # Headless Chromium prints reports to PDF; empty: `chromium` (or `chromium-browser`) on PATH.
    chromium_path: str = ""
    pdf_timeout_s: float = 60.0

    def files_dir(self) -> str:
        if self.data_dir:
            return self.data_dir
        if self.database_url.startswith("sqlite:///"):
            return self.database_url[len("sqlite:///"):] + ".files"
        return os.path.abspath("bathtub-files")
    # How long an Idempotency-Key is remembered (with its request's hash and first answer):
    # a retry within this time replays the answer; after it the key is purged and free again.
    idempotency_key_hours: float = 24.0
    # Jobs. A job whose quote (expected seconds on one core) passes the limit is refused
    # before it is queued. A running job's lease is renewed every heartbeat; another instance
    # recovers it only once the lease ran out (so a lease must outlive several heartbeats),
    # requeueing it up to max attempts. Stopping waits this long for running jobs to hand back.
    job_cpu_limit_seconds: float = 600.0
    job_lease_seconds: float = 20.0
    job_heartbeat_seconds: float = 2.0
    job_max_attempts: int = 3
    job_engine_threads: int = field(default_factory=lambda: os.cpu_count() or 1)  # per simulation job
    shutdown_grace_seconds: float = 5.0
    # CPU-seconds one strategy calculation (a request, not a job) may spend before it is refused
    # with 422 naming its inputs; the calculators check it in their loops (bathtub.strategy.guard).
    strategy_cpu_limit_seconds: float = 10.0
    # Scale-out: a dask.distributed scheduler address (tcp://host:8786). Set, every simulation
    # job's replications run in chunks on that cluster, merged to the local run's exact numbers.
    dask_scheduler: str = ""

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError("workers (BATHTUB_WORKERS) must be at least 1")
        if not self.token_cache_seconds >= 0:
            raise ValueError("token_cache_seconds (BATHTUB_TOKEN_CACHE_SECONDS) must be >= 0")
        if not self.job_cpu_limit_seconds > 0:
            raise ValueError("job_cpu_limit_seconds must be > 0")
        if not self.strategy_cpu_limit_seconds >= 0:
            raise ValueError("strategy_cpu_limit_seconds (BATHTUB_STRATEGY_CPU_LIMIT_SECONDS) must be >= 0")
        if not 0 < self.job_heartbeat_seconds <= self.job_lease_seconds / 3:
            raise ValueError("job_heartbeat_seconds must be > 0 and at most a third of job_lease_seconds")
        if self.job_engine_threads < 1:
            raise ValueError("job_engine_threads must be at least 1")
        if self.dask_scheduler:
            if "://" not in self.dask_scheduler:
                raise ValueError(f"BATHTUB_DASK_SCHEDULER must be a scheduler address such as tcp://host:8786 "
                                 f"(got {self.dask_scheduler!r})")
            if importlib.util.find_spec("distributed") is None:
                raise ValueError("BATHTUB_DASK_SCHEDULER is set but dask.distributed is not installed: "
                                 "pip install 'bathtub[cluster]'")
        if self.job_max_attempts < 1:
            raise ValueError("job_max_attempts must be at least 1")
        for plan in ("free", "pro"):
            for name in ("stored_items", "replications_per_job", "concurrent_jobs"):
                if getattr(self, f"{plan}_{name}") < 0:
                    raise ValueError(f"{plan}_{name} must be >= 0")
            cpu = getattr(self, f"{plan}_job_cpu_seconds")
            if cpu is not None and not cpu >= 0:
                raise ValueError(f"{plan}_job_cpu_seconds must be >= 0")
        if self.photo_decodes < 1:
            raise ValueError("photo_decodes (BATHTUB_PHOTO_DECODES) must be at least 1")
        if not self.photo_decode_wait_s >= 0:
            raise ValueError("photo_decode_wait_s (BATHTUB_PHOTO_DECODE_WAIT_SECONDS) must be >= 0")
        if not 1 <= self.photo_max_pixels <= PIXEL_CEILING:
            raise ValueError(f"photo_max_pixels (BATHTUB_PHOTO_MAX_PIXELS) must be between 1 and {PIXEL_CEILING:,} "
                             "(Pillow's decompression-bomb threshold)")
        if self.photo_max_edge < 0:
            raise ValueError("photo_max_edge (BATHTUB_PHOTO_MAX_EDGE) must be >= 0 (0 keeps photos at full size)")
        if not self.session_hours > 0:
            raise ValueError("session_hours must be > 0")
        if isinstance(self.trusted_proxies, str):  # one comma list, as the environment gives it
            object.__setattr__(self, "trusted_proxies", _comma_list(self.trusted_proxies))
        elif not isinstance(self.trusted_proxies, tuple):  # a list: a frozen config stays hashable
            object.__setattr__(self, "trusted_proxies", tuple(self.trusted_proxies))
        _ = self.trusted_networks  # a bad entry is refused at start-up, naming it
        if self.trusted_proxy_header.lower() not in ("x-forwarded-for", "forwarded"):
            raise ValueError(f"trusted_proxy_header (BATHTUB_TRUSTED_PROXY_HEADER) must be X-Forwarded-For or "
                             f"Forwarded (got {self.trusted_proxy_header!r})")

    @cached_property
    def trusted_networks(self) -> tuple[Network, ...]:
        return parse_networks(self.trusted_proxies, "trusted_proxies (BATHTUB_TRUSTED_PROXIES)")
    bad_token_limit_per_minute: int = 30  # failed authentications a minute per client address
    # Reverse proxies (addresses or CIDR networks) whose forwarding header the per-address limit
    # believes: from such a peer, the client is the right-most hop of `trusted_proxy_header`
    # (X-Forwarded-For, or Forwarded per RFC 7239) that is not itself a trusted proxy. Empty
    # (the default): the peer's own address, and no forwarding header is read.
    trusted_proxies: tuple[str, ...] = ()
    trusted_proxy_header: str = "X-Forwarded-For"
    # Plans (a user's plan is set with `bathtub user plan USER free|pro`; new users are free).
    # What each plan allows; a call past a limit is refused with 402 naming it (bathtub_api/plans.py).
    # Stored items are everything a user keeps (datasets, models, diagrams, runs, fleets, ...) but
    # uploads waiting for import; replications are a simulation's (or a bootstrap's resamples);
    # CPU-seconds are a job's quote on one core (the pro default is the service-wide per-job limit,
    # job_cpu_limit_seconds); concurrent jobs count queued and running ones.
    free_stored_items: int = 1000
    pro_stored_items: int = 100_000
    free_replications_per_job: int = 1_000_000
    pro_replications_per_job: int = 10_000_000
    free_job_cpu_seconds: float = 300.0
    pro_job_cpu_seconds: float | None = None
    free_concurrent_jobs: int = 4
    pro_concurrent_jobs: int = 16
    # Browser sessions (POST /api/v1/session): the cookie's HMAC key (empty: a random key kept in
    # the store, shared by every instance on it) and how long a session lasts.
    session_key: str = ""
    session_hours: float = 12.0

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
            values["database_url"] = "sqlite:///" + default_db_path()
        for key, name, conv in (
            ("rate_limit_per_minute", "BATHTUB_RATE_LIMIT", int),
            ("bad_token_limit_per_minute", "BATHTUB_BAD_TOKEN_LIMIT", int),
            ("max_body_bytes", "BATHTUB_MAX_BODY_BYTES", int),
            ("job_concurrency", "BATHTUB_JOB_CONCURRENCY", int),
            ("host", "BATHTUB_HOST", str),
            ("port", "BATHTUB_PORT", int),
            ("workers", "BATHTUB_WORKERS", int),
            ("token_cache_seconds", "BATHTUB_TOKEN_CACHE_SECONDS", float),
            ("base_url", "BATHTUB_BASE_URL", str),
            ("data_dir", "BATHTUB_DATA_DIR", str),
            ("upload_base_url", "BATHTUB_UPLOAD_BASE_URL", str),
            ("photo_decodes", "BATHTUB_PHOTO_DECODES", int),
            ("photo_decode_wait_s", "BATHTUB_PHOTO_DECODE_WAIT_SECONDS", float),
            ("photo_max_pixels", "BATHTUB_PHOTO_MAX_PIXELS", int),
            ("photo_max_edge", "BATHTUB_PHOTO_MAX_EDGE", int),
            ("smtp_url", "BATHTUB_SMTP_URL", str),
            ("smtp_from", "BATHTUB_SMTP_FROM", str),
            ("chromium_path", "BATHTUB_CHROMIUM", str),
            ("idempotency_key_hours", "BATHTUB_IDEMPOTENCY_KEY_HOURS", float),
            ("job_cpu_limit_seconds", "BATHTUB_JOB_CPU_LIMIT_SECONDS", float),
            ("job_lease_seconds", "BATHTUB_JOB_LEASE_SECONDS", float),
            ("job_heartbeat_seconds", "BATHTUB_JOB_HEARTBEAT_SECONDS", float),
            ("job_max_attempts", "BATHTUB_JOB_MAX_ATTEMPTS", int),
            ("job_engine_threads", "BATHTUB_JOB_ENGINE_THREADS", int),
            ("shutdown_grace_seconds", "BATHTUB_SHUTDOWN_GRACE_SECONDS", float),
            ("strategy_cpu_limit_seconds", "BATHTUB_STRATEGY_CPU_LIMIT_SECONDS", float),
            ("dask_scheduler", "BATHTUB_DASK_SCHEDULER", str),
            ("free_stored_items", "BATHTUB_FREE_STORED_ITEMS", int),
            ("pro_stored_items", "BATHTUB_PRO_STORED_ITEMS", int),
            ("free_replications_per_job", "BATHTUB_FREE_REPLICATIONS", int),
            ("pro_replications_per_job", "BATHTUB_PRO_REPLICATIONS", int),
            ("free_job_cpu_seconds", "BATHTUB_FREE_JOB_CPU_SECONDS", float),
            ("pro_job_cpu_seconds", "BATHTUB_PRO_JOB_CPU_SECONDS", float),
            ("free_concurrent_jobs", "BATHTUB_FREE_CONCURRENT_JOBS", int),
            ("pro_concurrent_jobs", "BATHTUB_PRO_CONCURRENT_JOBS", int),
            ("session_key", "BATHTUB_SESSION_KEY", str),
            ("session_hours", "BATHTUB_SESSION_HOURS", float),
            ("trusted_proxies", "BATHTUB_TRUSTED_PROXIES", _comma_list),
            ("trusted_proxy_header", "BATHTUB_TRUSTED_PROXY_HEADER", str),
        ):
            if name in env:
                values[key] = conv(env[name])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
