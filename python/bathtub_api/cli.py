"""`bathtub` command: serve (one process, or --workers N), token create/list/revoke, user plan, migrate.

Made for the first five minutes: `serve` says "serving on" only once it listens, a port in use or
a database it cannot open is one plain line (exit 2), every command names the database it uses
(the same per-user file wherever it runs from, see `config.default_db_path`), and options go
before or after the subcommand.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from importlib import metadata
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from aiohttp import web

from bathtub import engine_version
from bathtub_api.auth import SCOPES, hash_token, new_token
from bathtub_api.config import Config, default_db_path
from bathtub_api.ids import iso
from bathtub_api.listen import address_refusal, listen_refusal
from bathtub_api.plans import PLANS
from bathtub_api.private import restrict_umask
from bathtub_api.store import Store, open_store
from bathtub_api.store.failures import open_failure

TOKEN_HINT = "bathtub token create --user NAME --scopes read,write"


class Refused(Exception):
    """A start-up problem the user fixes (a port in use, a database path not writable): one line."""


def _config(args: argparse.Namespace) -> Config:
    db = getattr(args, "db", None)
    url = getattr(args, "database_url", None) or (f"sqlite:///{os.path.abspath(db)}" if db else None)
    return Config.from_env(database_url=url, **{k: getattr(args, k, None) for k in ("host", "port", "workers")})


def where(config: Config) -> str:
    """The database as a person reads it: the SQLite file's path, or the server's URL without a password."""
    url = config.database_url
    if url.startswith("sqlite:///"):
        return url[len("sqlite:///"):]
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    user = f"{parts.username}@" if parts.username else ""
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "password"])
    return urlunsplit((parts.scheme, user + host, parts.path, query, ""))


# How long a command waits, while starting, for what does not answer: a lock another process
# keeps on the SQLite file (a write holds it for milliseconds: half a second is plenty), and a
# PostgreSQL server (a remote one over TLS takes several round trips).
START_LOCK_WAIT_S = 0.5
START_CONNECT_TIMEOUT_S = 5.0


async def _with_store(config: Config, *, migrate: bool = True) -> Store:
    """The store, opened (and migrated); any failure to, the one line `Refused` naming why."""
    url = config.database_url
    try:
        return await open_store(url, migrate=migrate, lock_wait_s=START_LOCK_WAIT_S,
                                connect_timeout_s=START_CONNECT_TIMEOUT_S)
    except Exception as e:  # any driver's failure to open becomes the one plain line
        path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else None
        raise Refused(f"cannot open the database at {where(config)}: {open_failure(e, path)}") from None


async def token_create(config: Config, user: str, scopes: list[str], name: str = "cli") -> str:
    store = await _with_store(config)
    try:
        return await issue_token(store, user, scopes, name)
    finally:
        await store.close()


async def issue_token(store: Store, user: str, scopes: list[str], name: str = "cli") -> str:
    """A new token for `user` (created if new) on a store already open: `token create`'s work, which
    the tests also do through a running app's own store instead of opening (and migrating) another."""
    uid = await store.ensure_user(user)
    token = new_token()
    await store.add_token(uid, hash_token(token), token[:8], scopes, name)
    return token


async def _token_list(config: Config, user: str | None) -> None:
    store = await _with_store(config)
    print(f"bathtub: database {where(config)}", file=sys.stderr)  # once open: a refusal is the only line
    try:
        for t in await store.list_tokens(user):
            state = f"revoked {iso(t['revoked_at'])}" if t["revoked_at"] else "active"
            print(f"{t['id']}\t{t['user_name']}\t{t['prefix']}…\t{t['scopes']}\t{iso(t['created_at'])}\t{state}")
    finally:
        await store.close()


async def _token_revoke(config: Config, token_id: str) -> bool:
    store = await _with_store(config)
    try:
        return await store.revoke_token(token_id)
    finally:
        await store.close()


async def user_plan(config: Config, user: str, plan: str | None) -> str | None:
    """Put a user on a plan (or with None, read it): the plan, or None if there is no such user."""
    store = await _with_store(config)
    try:
        if plan is not None and not await store.set_plan(user, plan):
            return None
        return await store.user_plan(user)
    finally:
        await store.close()


async def _migrate(config: Config, to: int | None) -> int:
    store = await _with_store(config, migrate=False)
    try:
        return await store.migrate(to)
    finally:
        await store.close()


def _scopes(text: str) -> list[str]:
    scopes = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in scopes if s not in SCOPES]
    if bad or not scopes:
        raise argparse.ArgumentTypeError(f"scopes are a comma list of {', '.join(SCOPES)}")
    return scopes


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1 (got {text!r})")
    return value


def version() -> str:
    try:
        package = metadata.version("bathtub")
    except metadata.PackageNotFoundError:
        package = "unknown"
    from bathtub_api.openapi import API_VERSION

    return f"bathtub {package} (engine {engine_version}, API {API_VERSION})"


class _Version(argparse._VersionAction):
    """--version, worked out only when asked: the API's version lives beside the OpenAPI document,
    whose import brings the registry, the engine and scipy (~1.5 CPU-s), which every other
    command (`token list`, a refusal at start) would otherwise pay before doing anything."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        self.version = version()
        super().__call__(parser, namespace, values, option_string)


def _parser() -> argparse.ArgumentParser:
    def store_options(p: argparse.ArgumentParser, top: bool) -> None:
        # Accepted before or after the subcommand: the subcommand's copy leaves the value alone
        # unless given there (SUPPRESS), so `bathtub --db x serve` and `bathtub serve --db x` agree.
        default = None if top else argparse.SUPPRESS
        p.add_argument("--db", default=default, metavar="PATH",
                       help=f"SQLite file (default: {default_db_path()}; env BATHTUB_DB_PATH)")
        p.add_argument("--database-url", default=default, metavar="URL",
                       help="sqlite:///path or postgresql://user@host/db, instead of --db "
                            "(default: the --db file; env BATHTUB_DATABASE_URL)")

    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(prog="bathtub", description="Bathtub reliability analysis service",
                                     formatter_class=fmt,
                                     epilog=f"First steps: `bathtub serve`, then `{TOKEN_HINT}`.")
    parser.add_argument("--version", action=_Version)
    store_options(parser, True)
    sub = parser.add_subparsers(dest="command", required=True)

    def command(parent: Any, name: str, text: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = parent.add_parser(name, help=text, description=text)
        store_options(p, False)
        return p

    d = Config.__dataclass_fields__
    serve = command(sub, "serve", "run the HTTP service")
    serve.add_argument("--host", help=f"address to listen on (default: {d['host'].default}; env BATHTUB_HOST)")
    serve.add_argument("--port", type=int,
                       help=f"port to listen on (default: {d['port'].default}; env BATHTUB_PORT)")
    serve.add_argument("--workers", type=_positive,
                       help="service processes sharing the port (SO_REUSEPORT), about one per core; each has "
                            "its own store connections and job runner (default: 1; env BATHTUB_WORKERS)")
    token = command(sub, "token", "manage API tokens").add_subparsers(dest="token_command", required=True)
    create = command(token, "create", "create a token; printed once, only its hash is kept")
    create.add_argument("--user", required=True,
                        help="the user's name, created if new (default: none, required; no env)")
    create.add_argument("--scopes", type=_scopes, default=["read"],
                        help=f"comma list of {', '.join(SCOPES)} (default: read; no env)")
    listing = command(token, "list", "list tokens (never the secret)")
    listing.add_argument("--user", help="only this user's tokens (default: everyone's; no env)")
    create.add_argument("--name", default="cli",
                        help="a name to tell it by on the API access page (default: cli; no env)")
    revoke = command(token, "revoke", "revoke a token by its id (tok_...)")
    revoke.add_argument("token_id", help="the token's id, as `token list` shows it")
    user = command(sub, "user", "manage users").add_subparsers(dest="user_command", required=True)
    plan = command(user, "plan", "show a user's plan, or put them on one (limits: the guide topic `plans`)")
    plan.add_argument("user", help="the user's name")
    plan.add_argument("plan", nargs="?", choices=PLANS,
                      help="free or pro (default: show the current plan; no env)")
    migrate = command(sub, "migrate", "apply migrations (or go down to --to N)")
    migrate.add_argument("--to", type=int, help="schema version to migrate to (default: the newest; no env)")
    return parser


def _serve(config: Config) -> int:
    asyncio.run(_check_store(config))  # and migrate, once, before any worker starts
    refusal = address_refusal(config)
    if refusal is not None:
        raise Refused(refusal)

    def bound(_: str = "") -> None:  # called once every site (every worker) listens, not before
        workers = f", {config.workers} worker processes" if config.workers > 1 else ""
        print(f"bathtub: serving on http://{config.host}:{config.port} (database {where(config)}{workers}); "
              f"make a token with: {TOKEN_HINT}", flush=True)

    if config.workers > 1:
        from bathtub_api.workers import LOG_FORMAT, Supervisor

        logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
        code = Supervisor(config).run(bound)
        if code == 0:
            print("bathtub: stopped")
        return code

    from bathtub_api.app import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        # SIGINT/SIGTERM stop the server: requests in flight get shutdown_grace_seconds to finish,
        # then the job runner cancels and requeues running jobs and stops its pool workers.
        web.run_app(create_app(config), host=config.host, port=config.port, print=bound, access_log=None,
                    shutdown_timeout=config.shutdown_grace_seconds)
    except OSError as e:
        refusal = listen_refusal(config, e)
        if refusal is None:
            raise
        raise Refused(refusal) from None
    print("bathtub: stopped")
    return 0


async def _check_store(config: Config) -> None:
    store = await _with_store(config)  # refuses now, in one line, what the service would die of later
    await store.close()


def main(argv: list[str] | None = None) -> int:
    restrict_umask()  # the database folder and file a command may create are owner-only
    args = _parser().parse_args(argv)
    try:
        config = _config(args)
    except ValueError as e:  # a setting out of range (BATHTUB_* or an option): one line, not a traceback
        print(f"bathtub: {e}", file=sys.stderr)
        return 2
    try:
        return _run(args, config)
    except Refused as e:
        print(f"bathtub: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C before serving (serving, it stops the server: "stopped", 0)
        # A connect cut short leaves its future to the garbage collector, which asyncio reports as
        # "Future exception was never retrieved": noise about our own interruption, not a fault.
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        print("bathtub: interrupted", file=sys.stderr)
        return 130  # the shell's code for a command ended by SIGINT


def _run(args: argparse.Namespace, config: Config) -> int:
    if args.command == "serve":
        return _serve(config)
    if args.command == "token":
        if args.token_command == "create":
            token = asyncio.run(token_create(config, args.user, args.scopes, args.name))
            print(f"bathtub: token for {args.user} in database {where(config)} (shown once; only its hash is kept)",
                  file=sys.stderr)
            print(token)
            return 0
        if args.token_command == "list":
            asyncio.run(_token_list(config, args.user))
            return 0
        if asyncio.run(_token_revoke(config, args.token_id)):
            print(f"revoked {args.token_id}")
            return 0
        print(f"no active token {args.token_id} in database {where(config)}", file=sys.stderr)
        return 1
    if args.command == "user":
        plan = asyncio.run(user_plan(config, args.user, args.plan))
        if plan is None:
            print(f"no user {args.user} in database {where(config)} (a user is made by `token create`)",
                  file=sys.stderr)
            return 1
        print(f"{args.user}: plan {plan} (database {where(config)})")
        return 0
    print(f"schema version {asyncio.run(_migrate(config, args.to))} (database {where(config)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
