"""The browsable API docs. /api/v1/docs is every operation rendered on the server from the OpenAPI
document (bathtub_api.docs_index: plain HTML, shown at once); /api/v1/docs/try is Swagger UI
(assets from the `swagger-ui-bundle-v2` package, served here: no CDN) over /api/v1/openapi.json,
for trying requests; the guide's topics are linked from both, each readable as a page at
/api/v1/docs/guide/{topic}. Public: documentation, no user data."""

from __future__ import annotations

import html
import re
from collections.abc import Awaitable, Callable

import swagger_ui_bundle
from aiohttp import web
from markdown_it import MarkdownIt

from bathtub_api import docs_index, openapi
from bathtub_api.keys import CONFIG
from bathtub_api.precompressed import Precompressed
from bathtub_api.registry import Registry
from bathtub_api.tools.examples import placeholders, setup_requests
from bathtub_api.tools.guide import PAGES, topic_text

ROOT = "/api/v1/docs"
TRY = f"{ROOT}/try"
ASSETS = f"{ROOT}/assets"
# Swagger UI's scripts are files here, not inline, so a strict Content-Security-Policy holds.
CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'"

_INIT = """window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "/api/v1/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    persistAuthorization: false,
    // The Schemas section would render every component (about 150) under the operations before
    // the page settles; each operation shows its own request schema when opened.
    defaultModelsExpandDepth: -1,
    presets: [SwaggerUIBundle.presets.apis],
  });
};
"""


# CommonMark with raw HTML off: a guide text is Markdown (backticks, paragraphs, numbered steps), and
# anything in it that looks like a tag is shown as text, never as markup (html=False escapes it).
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


# A sentence ends at ". " before a capital, a backtick or a digit (not inside a code span: the text is
# split on backticks first); numbered steps "2) " start a block of their own.
_SENTENCE_END = re.compile(r"(?<=[.:;])\s+(?=(?:[A-Z`(]|\d+\)\s))")
_BEFORE_CODE = re.compile(r"[.:;]\s+$")
_STEP = re.compile(r"^\d+\)\s")
PARAGRAPH_CHARS = 600  # a page paragraph longer than this is cut at its next sentence end


def _sentences(text: str) -> list[str]:
    """Sentences of a guide paragraph, never cutting inside a `code span`."""
    out, current = [], ""
    parts = text.split("`")
    for i, part in enumerate(parts):
        if i % 2:  # inside a code span
            current += f"`{part}`"
            continue
        pieces = _SENTENCE_END.split(part)
        current += pieces[0]
        for piece in pieces[1:]:
            out.append(current.strip())
            current = piece
        if i + 1 < len(parts) and _BEFORE_CODE.search(current):  # "...; `next`": the sentence ends here
            out.append(current.strip())
            current = ""
    return [*out, current.strip()] if current.strip() else out


def layout(text: str) -> str:
    """A guide topic laid out for reading: each numbered step its own block and long paragraphs cut
    at sentence ends. The words are the topic's own; only where blocks break changes."""
    blocks: list[str] = []
    for para in text.split("\n\n"):
        block = ""
        for sentence in _sentences(para):
            if block and (_STEP.match(sentence) or len(block) + len(sentence) > PARAGRAPH_CHARS):
                blocks.append(block)
                block = ""
            block = f"{block} {sentence}".strip()
        if block:
            blocks.append(block)
    # "1) " would start an ordered list whose number Markdown renumbers: keep the writer's number
    return "\n\n".join(re.sub(r"^(\d+)\)", r"\1\\)", b) for b in blocks)


def guide_html(text: str) -> str:
    """A guide topic's Markdown as HTML, laid out in blocks (`layout`) and escaped (the same words
    `POST /api/v1/guide` answers)."""
    return _MARKDOWN.render(layout(text))


def _topics_nav() -> str:
    links = " · ".join(f'<a href="{ROOT}/guide/{key}" title="{html.escape(p.summary)}">{html.escape(p.title)}</a>'
                       for key, p in PAGES.items())
    return f'<nav class="guide"><strong>Guide:</strong> {links}</nav>'


def _html(title: str, body: str, head: str = "", stylesheet: bool = True) -> str:
    link = f'<link rel="stylesheet" href="{ROOT}/docs.css">' if stylesheet else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">{head}{link}</head>'
            f"<body>{body}</body></html>")


def _page(title: str, body: str, head: str = "") -> web.Response:
    return web.Response(text=_html(title, body, head), content_type="text/html",
                        headers={"Content-Security-Policy": CSP})


def index_html(reg: Registry) -> bytes:
    """The operation index: every operation from the registry's OpenAPI document, rendered."""
    body = f"{_topics_nav()}{docs_index.render(openapi.build(reg), placeholders(), setup_requests())}"
    # the style inline: one request fewer before the first paint (the page is cached as a whole)
    return _html("Bathtub API", body, f"<style>{_CSS}</style>", stylesheet=False).encode()


def schemas_html(reg: Registry) -> bytes:
    """The schema page: the schemas the operations name, other than request bodies, rendered."""
    body = f"{_topics_nav()}{docs_index.render_schemas(openapi.build(reg))}"
    return _html("Bathtub API schemas", body, f"<style>{_CSS}</style>", stylesheet=False).encode()


_CSS = """body { margin: 0; font-family: system-ui, sans-serif; }
nav.guide { padding: 0.6em 1.2em; background: #f4f6f8; border-bottom: 1px solid #dde; line-height: 1.8; }
nav.guide a { color: #1a5fb4; text-decoration: none; }
main.topic { max-width: 48em; margin: 1.5em auto; padding: 0 1.2em; line-height: 1.55; }
main.topic code { background: #f4f6f8; padding: 0 0.2em; overflow-wrap: anywhere; }
main.topic li { margin: 0.3em 0; }
header, main.ops { max-width: 60em; margin: 0 auto; padding: 0 1em; line-height: 1.5; }
header h1 { font-size: clamp(1.4em, 5vw, 2em); }
header h1 small { font-size: 0.55em; color: #555; font-weight: normal; }
header p, .desc, .opbody p { overflow-wrap: anywhere; }
code { font-family: ui-monospace, monospace; font-size: 0.92em; overflow-wrap: anywhere; }
section.tag h2, #errors h2, #schemas h2 { margin: 1.2em 0 0.4em; border-bottom: 1px solid #dde; }
details.op { border: 1px solid #cfd8e3; border-radius: 4px; margin: 0.35em 0; background: #fbfcfd; }
details.op > summary { cursor: pointer; padding: 0.45em 0.6em; overflow-wrap: anywhere; }
details.op[open] > summary { border-bottom: 1px solid #cfd8e3; background: #eef3f8; }
.method { display: inline-block; min-width: 3.6em; text-align: center; font: bold 0.8em system-ui, sans-serif;
  color: #fff; background: #2f6f3e; border-radius: 3px; padding: 0.15em 0.3em; }
.m-get { background: #1a5fb4; } .m-put { background: #8a5a00; } .m-delete { background: #a51d2d; }
.path { font-weight: 600; }
.summary { color: #333; }
.opbody { padding: 0 0.9em 0.6em; }
.opbody h4 { margin: 0.9em 0 0.3em; }
.ct { font-weight: normal; }
.facts, .refusals, .note { color: #444; font-size: 0.93em; }
ul.props { padding-left: 1.1em; margin: 0.3em 0; }
ul.props li { margin: 0.25em 0; }
.name { font-weight: 600; }
.type { color: #1a5fb4; }
.req { color: #a51d2d; font-size: 0.85em; }
.rules, .in { color: #555; font-size: 0.88em; }
.desc { color: #222; }
.example pre { background: #f4f6f8; border: 1px solid #dde; padding: 0.5em; overflow-x: auto; max-width: 100%;
  box-sizing: border-box; font-size: 0.85em; }
.example pre code { overflow-wrap: normal; }
details.setup > summary, details.checked > summary { cursor: pointer; color: #1a5fb4; margin: 0.3em 0; }
ul.placeholders { font-size: 0.93em; padding-left: 1.1em; }
section.schema { border-top: 1px solid #eef; content-visibility: auto; contain-intrinsic-size: auto 12em; }
section.schema h3 { margin: 0.8em 0 0.2em; font-family: ui-monospace, monospace; }
"""


def add_routes(app: web.Application, reg: Registry) -> None:
    built: dict[str, Precompressed] = {}  # rendered at the first request (tests build many apps and never ask)

    def rendered(make: Callable[[Registry], bytes]) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def serve(request: web.Request) -> web.Response:
            if make.__name__ not in built:
                built[make.__name__] = Precompressed(make(reg), content_type="text/html")
            response = built[make.__name__].response(request)  # gzip when asked, 304 when the browser has it
            response.headers["Content-Security-Policy"] = CSP
            return response

        return serve

    async def swagger(request: web.Request) -> web.Response:
        head = f'<link rel="stylesheet" href="{ASSETS}/swagger-ui.css">'
        body = (f'{_topics_nav()}<p class="back"><a href="{ROOT}">All operations, described</a></p>'
                f'<div id="swagger-ui"></div>'
                f'<script src="{ASSETS}/swagger-ui-bundle.js"></script><script src="{ROOT}/init.js"></script>')
        return _page("Try the Bathtub API", body, head)

    async def init_js(request: web.Request) -> web.Response:
        return web.Response(text=_INIT, content_type="application/javascript")

    async def css(request: web.Request) -> web.Response:
        return web.Response(text=_CSS, content_type="text/css")

    async def topic(request: web.Request) -> web.Response:
        key = request.match_info["topic"]
        page = PAGES.get(key)
        if page is None:
            raise web.HTTPNotFound()
        actions = "".join(f"<li><code>{html.escape(a)}</code></li>" for a in page.actions)
        text = topic_text(key, request.app[CONFIG])
        body = (f"{_topics_nav()}<main class=\"topic\"><h1>{html.escape(page.title)}</h1>"
                f"<p><em>{html.escape(page.summary)}</em></p>{guide_html(text)}"
                f"<h2>Actions</h2><ul>{actions}</ul>"
                f'<p><a href="{ROOT}">All operations</a> · the same text: <code>POST /api/v1/guide</code> '
                f"<code>{{\"topic\": \"{html.escape(key)}\"}}</code></p></main>")
        return _page(f"{page.title} · Bathtub guide", body)

    app.router.add_get(ROOT, rendered(index_html), name="docs")
    app.router.add_get(f"{ROOT}/schemas", rendered(schemas_html), name="docs_schemas")
    app.router.add_get(TRY, swagger, name="docs_try")
    app.router.add_get(f"{ROOT}/init.js", init_js, name="docs_init")
    app.router.add_get(f"{ROOT}/docs.css", css, name="docs_css")
    app.router.add_get(f"{ROOT}/guide/{{topic}}", topic, name="docs_topic")
    app.router.add_static(ASSETS, swagger_ui_bundle.swagger_ui_path, name="docs_assets")
