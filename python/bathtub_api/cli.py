"""`bathtub` command: serve, token create/list/revoke, migrate."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from aiohttp import web

from bathtub_api.auth import SCOPES, hash_token, new_token
from bathtub_api.config import Config
from bathtub_api.ids import iso
from bathtub_api.store import Store, open_store


def _config(args: argparse.Namespace) -> Config:
    url = args.database_url or (f"sqlite:///{args.db}" if args.db else None)
    return Config.from_env(database_url=url, **{k: getattr(args, k, None) for k in ("host", "port")})


async def _with_store(config: Config) -> Store:
    return await open_store(config.database_url)


async def token_create(config: Config, user: str, scopes: list[str]) -> str:
    store = await _with_store(config)
    try:
        uid = await store.ensure_user(user)
        token = new_token()
        await store.add_token(uid, hash_token(token), token[:8], scopes)
        return token
    finally:
        await store.close()


async def _token_list(config: Config, user: str | None) -> None:
    store = await _with_store(config)
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


async def _migrate(config: Config, to: int | None) -> int:
    store = await open_store(config.database_url, migrate=False)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bathtub", description="Bathtub reliability analysis service")
    parser.add_argument("--db", help="SQLite file (default bathtub.sqlite3, or $BATHTUB_DB_PATH)")
    parser.add_argument("--database-url", help="sqlite:///path or postgresql://... (or $BATHTUB_DATABASE_URL)")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    token = sub.add_parser("token", help="manage API tokens").add_subparsers(dest="token_command", required=True)
    create = token.add_parser("create", help="create a token; printed once, only its hash is kept")
    create.add_argument("--user", required=True)
    create.add_argument("--scopes", type=_scopes, default=["read"])
    listing = token.add_parser("list", help="list tokens (never the secret)")
    listing.add_argument("--user")
    revoke = token.add_parser("revoke", help="revoke a token by its id (tok_...)")
    revoke.add_argument("token_id")
    migrate = sub.add_parser("migrate", help="apply migrations (or go down to --to N)")
    migrate.add_argument("--to", type=int)
    args = parser.parse_args(argv)
    config = _config(args)

    if args.command == "serve":
        from bathtub_api.app import create_app

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        print(f"bathtub: serving on http://{config.host}:{config.port} (store {config.database_url.split('@')[-1]})")
        # SIGINT/SIGTERM stop the server: requests in flight get shutdown_grace_seconds to finish,
        # then the job runner cancels and requeues running jobs and stops its pool workers.
        web.run_app(create_app(config), host=config.host, port=config.port, print=None, access_log=None,
                    shutdown_timeout=config.shutdown_grace_seconds)
        print("bathtub: stopped")
        return 0
    if args.command == "token":
        if args.token_command == "create":
            print(asyncio.run(token_create(config, args.user, args.scopes)))
            return 0
        if args.token_command == "list":
            asyncio.run(_token_list(config, args.user))
            return 0
        if asyncio.run(_token_revoke(config, args.token_id)):
            print(f"revoked {args.token_id}")
            return 0
        print(f"no active token {args.token_id}", file=sys.stderr)
        return 1
    print(f"schema version {asyncio.run(_migrate(config, args.to))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
