"""Numbered schema migrations, written once in SQL both SQLite and PostgreSQL accept.

Each step is (version, up, down). They are applied in order at start-up; `down` exists so
the stairway test (up, down, up for every step) proves each step reverses cleanly.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        """
        CREATE TABLE users (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at DOUBLE PRECISION NOT NULL
        );
        CREATE TABLE tokens (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id),
            hash TEXT NOT NULL UNIQUE,
            prefix TEXT NOT NULL,
            scopes TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            revoked_at DOUBLE PRECISION
        );
        CREATE TABLE items (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL REFERENCES users(id),
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            body TEXT NOT NULL
        );
        CREATE INDEX items_owner_kind ON items (owner, kind, created_at);
        CREATE TABLE dataset_chunks (
            dataset_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            chunk INTEGER NOT NULL,
            n INTEGER NOT NULL,
            rows TEXT NOT NULL,
            PRIMARY KEY (dataset_id, chunk)
        );
        """,
        """
        DROP TABLE dataset_chunks;
        DROP INDEX items_owner_kind;
        DROP TABLE items;
        DROP TABLE tokens;
        DROP TABLE users;
        """,
    ),
    (
        2,
        """
        CREATE TABLE jobs (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL REFERENCES users(id),
            action TEXT NOT NULL,
            status TEXT NOT NULL,
            args TEXT NOT NULL,
            result TEXT,
            message TEXT,
            created_at DOUBLE PRECISION NOT NULL,
            started_at DOUBLE PRECISION,
            finished_at DOUBLE PRECISION
        );
        CREATE INDEX jobs_status_created ON jobs (status, created_at);
        """,
        """
        DROP INDEX jobs_status_created;
        DROP TABLE jobs;
        """,
    ),
    (
        3,
        # A version per item, so read-modify-write updates can be made conditional.
        "ALTER TABLE items ADD COLUMN version INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE items DROP COLUMN version",
    ),
    (
        4,
        # Idempotency keys: one row per (owner, scope, key) with the request's hash and the
        # first answer, kept for Config.idempotency_key_hours and purged by age (the index).
        """
        CREATE TABLE idempotency_keys (
            owner TEXT NOT NULL REFERENCES users(id),
            scope TEXT NOT NULL,
            key TEXT NOT NULL,
            request_hash TEXT NOT NULL,
            answer TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (owner, scope, key)
        );
        CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
        """,
        """
        DROP INDEX idempotency_keys_created;
        DROP TABLE idempotency_keys;
        """,
    ),
    (
        5,
        # Job leases: the instance running a job renews lease_expires_at with a heartbeat
        # (and publishes progress), so other instances recover only jobs whose lease ran out;
        # attempts bounds how often a job that keeps killing its instance is requeued.
        """
        ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
        ALTER TABLE jobs ADD COLUMN lease_expires_at DOUBLE PRECISION;
        ALTER TABLE jobs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE jobs ADD COLUMN progress DOUBLE PRECISION;
        ALTER TABLE jobs ADD COLUMN eta_s DOUBLE PRECISION;
        CREATE INDEX jobs_status_lease ON jobs (status, lease_expires_at);
        """,
        """
        DROP INDEX jobs_status_lease;
        ALTER TABLE jobs DROP COLUMN eta_s;
        ALTER TABLE jobs DROP COLUMN progress;
        ALTER TABLE jobs DROP COLUMN attempts;
        ALTER TABLE jobs DROP COLUMN lease_expires_at;
        ALTER TABLE jobs DROP COLUMN lease_owner;
        """,
    ),
    (
        6,
        # Alert emails wait here until the SMTP server takes them: an outbox written in the same
        # transaction as the change that fired the alert, so no alert is lost or sent twice.
        """
        CREATE TABLE mail_outbox (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL REFERENCES users(id),
            recipient TEXT NOT NULL,
            subject TEXT NOT NULL,
            body TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_try DOUBLE PRECISION NOT NULL,
            sent_at DOUBLE PRECISION,
            last_error TEXT
        );
        CREATE INDEX mail_outbox_pending ON mail_outbox (sent_at, next_try);
        """,
        "DROP TABLE mail_outbox",
    ),
    (
        7,
        # A tracked fleet's measurements, one row per (item, time): appended by the tracking
        # ingest in the same transaction as the fleet's new predictions; gone with the fleet.
        """
        CREATE TABLE tracking_measurements (
            fleet_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            item TEXT NOT NULL,
            t DOUBLE PRECISION NOT NULL,
            value DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (fleet_id, item, t)
        );
        """,
        "DROP TABLE tracking_measurements",
    ),
    (
        8,
        # Share links: a read-only page of one item for anyone with the URL. Only the SHA-256 of
        # the link's secret is kept (the URL is shown once); revoked or expired links stay listed.
        """
        CREATE TABLE share_links (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL REFERENCES users(id),
            kind TEXT NOT NULL,
            item_id TEXT NOT NULL,
            hash TEXT NOT NULL UNIQUE,
            created_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION,
            revoked_at DOUBLE PRECISION
        );
        CREATE INDEX share_links_owner ON share_links (owner, created_at);
        """,
        """
        DROP INDEX share_links_owner;
        DROP TABLE share_links
        """,
    ),
    (
        9,
        # Plans and sessions. A user's plan (free or pro, set with `bathtub user plan`) picks the
        # limits of Config.plan_limits. A token gets a name and the time it was last used, for the
        # API access page. A browser session is a row (so sign-out and revoking its token end it
        # server-side) named by a signed cookie; the signing key lives in server_secrets unless the
        # configuration gives one, so every instance on one store signs alike.
        """
        ALTER TABLE users ADD COLUMN plan TEXT NOT NULL DEFAULT 'free';
        ALTER TABLE tokens ADD COLUMN name TEXT NOT NULL DEFAULT '';
        ALTER TABLE tokens ADD COLUMN last_used_at DOUBLE PRECISION;
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            token_id TEXT NOT NULL REFERENCES tokens(id),
            created_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            ended_at DOUBLE PRECISION
        );
        CREATE INDEX sessions_token ON sessions (token_id);
        CREATE TABLE server_secrets (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX jobs_owner_status ON jobs (owner, status)
        """,
        """
        DROP INDEX jobs_owner_status;
        DROP TABLE server_secrets;
        DROP INDEX sessions_token;
        DROP TABLE sessions;
        ALTER TABLE tokens DROP COLUMN last_used_at;
        ALTER TABLE tokens DROP COLUMN name;
        ALTER TABLE users DROP COLUMN plan
        """,
    ),
]


def statements(sql: str) -> list[str]:
    """Split a migration into single statements (asyncpg and sqlite3 both run one at a time)."""
    return [s.strip() for s in sql.split(";") if s.strip()]
