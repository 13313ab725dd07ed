"""Server-rendered pages of share links and reports: one Jinja2 environment (autoescaped: every
user text is escaped), templates and the stylesheet shipped in this package, plots inline as SVG.
No scripts and no outside assets: a page reads the same offline and printed to PDF."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import jinja2

from bathtub_api.pages.readings import interval, label, lower_bound, per_time
from bathtub_api.pages.views import KIND_TITLES, Section

STYLESHEET = "/pages/assets/page.css"
ICON = "/pages/assets/icon.svg"
# No script may run; styles come from the stylesheet and the SVGs' own <style> elements.
CSP = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'"


def number(v: Any, digits: int = 4) -> str:
    """A number as a reader wants it: 4 significant digits, no exponent for everyday sizes."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if not math.isfinite(v):
        return "∞" if v > 0 else ("−∞" if v < 0 else "–")
    if v != 0 and (abs(v) >= 1e7 or abs(v) < 1e-4):
        return f"{v:.{digits - 1}e}"
    text = f"{v:.{digits}g}"
    if "e" in text:
        text = f"{v:.{max(digits - len(str(int(abs(v)))), 0)}f}"
    return text


def cell(v: Any) -> str:
    """A stored value exactly as stored (a dataset's cell): a figure the service computed is
    rounded for reading (`number`), but data a person entered is shown whole, so 1650.3 stays
    1650.3. A float with no fraction drops its ".0"; missing is "–"."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, float) and not math.isfinite(v):
        return "∞" if v > 0 else "−∞"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    return repr(v)


def percent(v: Any, digits: int = 4) -> str:
    return "–" if v is None else f"{number(100.0 * float(v), digits)}%"


def when(v: Any) -> str:
    """An ISO timestamp as a date and time in UTC."""
    if not v:
        return ""
    t = datetime.fromisoformat(str(v).replace("Z", "+00:00")).astimezone(UTC)
    return t.strftime("%d %b %Y, %H:%M UTC")


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("bathtub_api.pages", "templates"),
    autoescape=True,
    undefined=jinja2.ChainableUndefined,  # a field a kind lacks shows empty, never a 500
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters.update(num=number, cell=cell, pct=percent, when=when)
_ENV.globals.update(kind_titles=KIND_TITLES, stylesheet=STYLESHEET, interval_of=interval, lower_of=lower_bound)
_ENV.filters.update(label=label, per_time=per_time)


def render_page(title: str, kind: str, sections: list[Section], *, created_at: str | None = None,
                pdf_url: str | None = None, note: str | None = None, standalone: bool = False,
                author: str | None = None) -> str:
    """A whole page: header (name, kind, date), the sections, the footer. `standalone` inlines the
    stylesheet (a page printed from a file, which fetches nothing); a report printed so also gets
    its running header and page numbers (`print_margins`). `author`: a report's, on its cover."""
    generated = datetime.now(UTC).strftime("%d %b %Y, %H:%M UTC")
    css = None
    if standalone:
        css = stylesheet()
        if kind == "report":
            css += print_margins(title, when(created_at) or generated)
    return _ENV.get_template("page.html").render(
        title=title, kind=kind, sections=sections, created_at=created_at, pdf_url=pdf_url, note=note,
        inline_css=css, author=author, generated=generated)


def css_string(v: str) -> str:
    """A CSS string literal of any text: quotes, backslashes and line breaks escaped, and `<`
    too, so a report named `</style>` cannot end the style element it is printed in."""
    out = "".join(f"\\{ord(c):x} " if c in '"\\<\n\r' or ord(c) < 32 else c for c in v)
    return f'"{out}"'


def print_margins(title: str, date: str) -> str:
    """The printed report's page margins (CSS paged media, which Chromium prints): the report's
    name and date as a running header and "Page n of N" at the foot, on every page but the cover."""
    box = "font: 8.5pt system-ui, sans-serif; color: #616e7c;"
    return (f"@media print {{ @page {{ @top-left {{ content: {css_string(title)}; {box} }} "
            f"@top-right {{ content: {css_string(date)}; {box} }} "
            f'@bottom-right {{ content: "Page " counter(page) " of " counter(pages); {box} }} }} '
            "@page :first { @top-left { content: none; } @top-right { content: none; } "
            "@bottom-right { content: none; } } }\n")


def render_gone() -> str:
    return _ENV.get_template("gone.html").render()


def asset(name: str) -> str:
    """A file of static/ (the stylesheet, the icon), shipped in the package."""
    return resources.files("bathtub_api.pages").joinpath("static", name).read_text(encoding="utf-8")


def stylesheet() -> str:
    return asset("page.css")
