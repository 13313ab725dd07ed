"""The OpenAPI document travels light (issue 29): gzip when the request's Accept-Encoding takes
it, the same document either way, and 304 with no body when the client already has it."""

from __future__ import annotations

import gzip
from typing import Any

import orjson
import pytest

from bathtub_api.app import create_app
from bathtub_api.config import Config
from bathtub_api.precompressed import accepts_gzip
from bathtub_api.registry import Registry

URL = "/api/v1/openapi.json"


async def _get(client: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    # raw bytes: the test client would otherwise undo the gzip it asked for
    async with client.get(URL, headers=headers, auto_decompress=False) as resp:
        return resp.status, {k.lower(): v for k, v in resp.headers.items()}, await resp.read()


async def test_gzip_when_asked_and_plain_otherwise(client: Any) -> None:
    status, plain_headers, plain = await _get(client, {"Accept-Encoding": "identity"})
    assert status == 200 and "content-encoding" not in plain_headers
    doc = orjson.loads(plain)
    assert doc["openapi"] == "3.1.0"
    status, headers, packed = await _get(client, {"Accept-Encoding": "br;q=1.0, gzip;q=0.8"})
    assert status == 200 and headers["content-encoding"] == "gzip" and "Accept-Encoding" in headers["vary"]
    assert headers["cache-control"] == "no-cache"  # kept, but checked again: the ETag makes that cheap
    assert orjson.loads(gzip.decompress(packed)) == doc
    assert len(packed) * 5 < len(plain), (len(packed), len(plain))  # compression is worth its name
    assert headers["etag"] != plain_headers["etag"]  # two encodings, two representations
    status, headers, _ = await _get(client, {"Accept-Encoding": "gzip;q=0, identity"})
    assert "content-encoding" not in headers


async def test_etag_and_304(client: Any, aiohttp_client: Any, config: Config, registry: Registry) -> None:
    status, headers, body = await _get(client, {"Accept-Encoding": "gzip"})
    etag = headers["etag"]
    assert status == 200 and etag.startswith('"') and body
    status, again, body = await _get(client, {"Accept-Encoding": "gzip", "If-None-Match": etag})
    assert (status, body, again["etag"]) == (304, b"", etag)
    status, _, body = await _get(client, {"If-None-Match": f'"other", W/{etag}'})  # weak comparison, in a list
    assert (status, body) == (304, b"")
    status, _, body = await _get(client, {"Accept-Encoding": "gzip", "If-None-Match": '"stale"'})
    assert status == 200 and body
    # the same document gives the same tag in another app (a restart, another worker)
    status, other, _ = await _get(await aiohttp_client(create_app(config, registry)), {"Accept-Encoding": "gzip"})
    assert other["etag"] == etag


@pytest.mark.parametrize(("header", "gz"), [
    ("gzip", True), ("deflate, gzip", True), ("*", True), ("gzip;q=0", False), ("identity", False),
    ("", False), ("*;q=0, gzip;q=0.5", True), ("gzip;q=0, *", False), ("GZIP;Q=1", True), ("gzip;q=x", False)])
def test_accept_encoding_is_read_as_rfc_9110_says(header: str, gz: bool) -> None:
    assert accepts_gzip(header) is gz
