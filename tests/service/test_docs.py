"""The browsable docs: /api/v1/docs is every operation rendered on the server from the OpenAPI
document (no script, escaped, cached with an ETag and gzip); /api/v1/docs/try is Swagger UI served
by the service itself (no CDN) reading that document; every guide topic is linked from both and
readable as a page."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bathtub_api.tools.guide import PAGES

# The docs pages and guide topics: no store-specific behaviour (see tests/conftest.py).
pytestmark = pytest.mark.one_store


async def _get(client: Any, path: str) -> tuple[int, str, bytes]:
    async with client.get(path) as resp:  # no token: the docs are public
        return resp.status, resp.content_type, await resp.read()


async def test_docs_page_and_every_asset_and_topic_answer(client: Any) -> None:
    status, ctype, body = await _get(client, "/api/v1/docs/try")
    assert status == 200 and ctype == "text/html"
    page = body.decode()
    refs = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert not [r for r in refs if r.startswith(("http:", "https:", "//"))], "no asset from a CDN"
    scripts = re.findall(r'src="([^"]+)"', page)
    assert "/api/v1/docs/assets/swagger-ui-bundle.js" in scripts
    kinds = {}
    for ref in refs:
        status, ctype, content = await _get(client, ref)
        assert status == 200 and content, ref
        kinds[ref] = ctype
    assert kinds["/api/v1/docs/assets/swagger-ui-bundle.js"] in ("application/javascript", "text/javascript")
    assert kinds["/api/v1/docs/assets/swagger-ui.css"] == "text/css"
    status, _, init = await _get(client, "/api/v1/docs/init.js")
    assert b'url: "/api/v1/openapi.json"' in init
    status, ctype, _ = await _get(client, "/api/v1/openapi.json")
    assert status == 200 and ctype == "application/json"
    topics = {r.rsplit("/", 1)[1] for r in refs if r.startswith("/api/v1/docs/guide/")}
    assert topics == set(PAGES)
    for key, p in PAGES.items():
        status, ctype, content = await _get(client, f"/api/v1/docs/guide/{key}")
        assert status == 200 and ctype == "text/html" and p.title.replace("&", "&amp;").encode() in content


async def test_unknown_topic_and_asset_are_404(client: Any) -> None:
    assert (await _get(client, "/api/v1/docs/guide/nope"))[0] == 404
    assert (await _get(client, "/api/v1/docs/assets/../../../etc/passwd"))[0] == 404
    # Only the docs are public: the API beside them still wants a token.
    async with client.post("/api/v1/list/dataset", json={}) as resp:
        assert resp.status == 401


async def test_the_topic_list_gives_each_topic_s_summary(client: Any, config: Any) -> None:
    from bathtub_api.cli import token_create

    token = await token_create(config, "alice", ["read"])
    async with client.post("/api/v1/guide", json={}, headers={"Authorization": f"Bearer {token}"}) as resp:
        topics = (await resp.json())["topics"]
    assert [t["id"] for t in topics] == list(PAGES)
    assert all(t["summary"] == PAGES[t["id"]].summary and t["title"] for t in topics)


async def test_the_index_lists_every_operation_and_is_served_cached(client: Any) -> None:
    async with client.get("/api/v1/openapi.json") as resp:
        doc = await resp.json()
    async with client.get("/api/v1/docs", headers={"Accept-Encoding": "gzip"}) as resp:
        assert resp.status == 200 and resp.content_type == "text/html"
        assert resp.headers["Content-Encoding"] == "gzip"
        assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
        etag, page = resp.headers["ETag"], await resp.text()
    ids = re.findall(r'<details class="op" id="operations-([\w-]+)"', page)
    expected = [f"{op['tags'][0]}-{op['operationId']}" for ops in doc["paths"].values() for op in ops.values()]
    assert sorted(ids) == sorted(expected)
    assert "<script" not in page, "the index is plain HTML: nothing to download before it shows"
    assert page.count('<div class="example">') == sum(
        "example" in c for ops in doc["paths"].values() for op in ops.values()
        for c in op.get("requestBody", {}).get("content", {}).values())
    for key in PAGES:
        assert f'href="/api/v1/docs/guide/{key}"' in page
    async with client.get("/api/v1/docs/schemas") as resp:
        assert resp.status == 200 and resp.content_type == "text/html"
        schemas = await resp.text()
    assert "<script" not in schemas
    # every link between the two pages lands on an element of the page it names
    pages = {"/api/v1/docs": page, "/api/v1/docs/schemas": schemas}
    for here, text in pages.items():
        for target, fragment in re.findall(r'href="(/api/v1/docs(?:/schemas)?)?#([^"]+)"', text):
            assert f' id="{fragment}"' in pages[target or here], (here, target, fragment)
    assert 'href="/api/v1/docs/schemas#schema-OutageColumns"' in page
    async with client.get("/api/v1/docs", headers={"Accept-Encoding": "gzip", "If-None-Match": etag}) as resp:
        assert resp.status == 304 and not await resp.read()


def test_the_index_escapes_what_the_document_says() -> None:
    from bathtub_api.docs_index import render

    evil = "<script>alert(1)</script>"
    doc = {"info": {"title": evil, "description": f"`{evil}`"},
           "paths": {"/x/<b>": {"post": {"operationId": "x\"><i>", "summary": evil, "description": evil, "tags": [evil],
                                         "requestBody": {"content": {"application/json": {
                                             "schema": {"$ref": "#/components/schemas/M"},
                                             "example": {evil: "{thing}"}}}},
                                         "responses": {"200": {"description": evil}}}}},
           "components": {"schemas": {"M": {"description": evil, "properties": {
               evil: {"type": "string", "description": evil, "default": evil, "enum": [evil], "pattern": evil}}}}}}
    page = render(doc, {"thing": evil})
    assert "<script" not in page and "<b>" not in page and "<i>" not in page
    assert page.count("&lt;script&gt;") >= 10


def test_a_guide_naming_an_action_the_service_lacks_is_refused_at_build() -> None:
    from bathtub_api.registry import Registry
    from bathtub_api.tools import guide

    reg = Registry()
    guide.register(reg)  # the guide alone: every other topic's actions are missing
    with pytest.raises(RuntimeError, match="guide topic 'life_data' names actions this service lacks"):
        guide.check_pages(reg)


async def test_guide_pages_are_rendered_markdown_not_raw_text(client: Any, config: Any) -> None:
    """Each topic page is the guide's Markdown rendered: code spans become <code>, no backtick is left
    in the page's text, and steps and paragraphs are blocks of their own."""
    from bathtub_api.tools.guide import topic_text

    for key in PAGES:
        _, _, content = await _get(client, f"/api/v1/docs/guide/{key}")
        main = content.decode().split('<main class="topic">', 1)[1].split("</main>", 1)[0]
        text = topic_text(key, config)
        assert "`" not in re.sub(r"<code>.*?</code>", "", main, flags=re.S), key
        assert main.count("<code>") >= text.count("`") // 2, key
        paragraphs = [p for p in text.split("\n\n") if p.strip()]
        assert main.count("<p>") + main.count("<li>") >= len(paragraphs), key
        # laid out in blocks a reader can take in: none runs past ~900 characters of text
        blocks = [re.sub(r"<[^>]+>", "", b) for b in re.findall(r"<p>(.*?)</p>", main, flags=re.S)]
        assert blocks and max(len(b) for b in blocks) < 1000, (key, max(len(b) for b in blocks))


def test_layout_keeps_every_word_and_cuts_only_between_sentences() -> None:
    from bathtub_api.docs import layout

    for key, page in PAGES.items():
        laid = layout(page.text)
        assert re.sub(r"\s+|\\", "", laid) == re.sub(r"\s+", "", page.text), key
        for block in laid.split("\n\n"):
            assert block.count("`") % 2 == 0, (key, block[:80])  # no code span cut in two
    assert layout("1) one. 2) two `a. B` three. Four.") == "1\\) one.\n\n2\\) two `a. B` three. Four."


def test_guide_markdown_is_escaped() -> None:
    from bathtub_api.docs import guide_html

    out = guide_html("failures <= demands, `<b>x</b>` and <script>alert(1)</script>")
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "<code>&lt;b&gt;x&lt;/b&gt;</code>" in out and "&lt;= demands" in out
