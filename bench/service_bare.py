"""The physical limit of the service's stack on this machine: a bare aiohttp handler answering
the same `get/dataset` request with the same 100-row page, held in memory.

It parses the JSON body and serialises the page with orjson on every request, as any JSON
handler must, but has no auth, no store, no validation, no middlewares and no request log:
what is left is aiohttp's HTTP parsing and writing on this Python and event loop.
`bench/service_load.py` runs it interleaved with the service and reports the service's
requests/s as a ratio to it.

    python bench/service_bare.py PORT
"""

from __future__ import annotations

import argparse

import orjson
from aiohttp import web

COLUMNS = [{"name": "time", "type": "number"}, {"name": "state", "type": "string"},
           {"name": "n", "type": "integer"}]


def page() -> dict[str, object]:
    """What the service answers for the bench dataset's first 100 rows (bench/service_load.py)."""
    rows = [{"time": i * 7.5, "state": "F" if i % 3 else "S", "n": i % 4} for i in range(100)]
    return {"id": "ds_bare", "name": "bench", "notes": "", "columns": COLUMNS, "row_count": 1000, "offset": 0,
            "limit": 100, "rows": rows, "next_offset": 100, "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z"}


def app() -> web.Application:
    data = page()

    async def get_dataset(request: web.Request) -> web.Response:
        body = orjson.loads(await request.read())
        return web.Response(body=orjson.dumps({**data, "id": body["id"]}), content_type="application/json")

    async def health(request: web.Request) -> web.Response:
        return web.Response(body=b'{"status": "ok"}', content_type="application/json")

    application = web.Application()
    application.router.add_post("/api/v1/get/dataset", get_dataset)
    application.router.add_get("/healthz", health)
    return application


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("port", type=int)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()
    web.run_app(app(), host=args.host, port=args.port, access_log=None, print=None)


if __name__ == "__main__":
    main()
