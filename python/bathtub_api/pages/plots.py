"""The pictures of share pages and reports: matplotlib figures (Agg, no pyplot state, so threads
may draw at once) written as inline SVG. Each function takes numbers a record or the library
gave and only draws them."""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before anything imports pyplot: never a GUI backend in the service

from matplotlib import patches
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from bathtub.life.paper import Paper, from_y, to_y
from bathtub_api.pages.readings import per_time

INK, MUTED, ACCENT, BAND, WARN = "#1f2933", "#7b8794", "#1a5fb4", "#a7c4ec", "#c0392b"
matplotlib.rcParams.update({
    "svg.fonttype": "none",  # text stays text: the page's fonts, selectable, small files
    "svg.hashsalt": "bathtub",  # stable element ids: the same record draws the same SVG
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.edgecolor": MUTED,
    "axes.labelcolor": INK,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e4e7eb",
    "grid.linewidth": 0.6,
    "xtick.color": MUTED,
    "ytick.color": MUTED,
    "legend.frameon": False,
    "legend.fontsize": 9,  # no text below FONT_MIN: a phone keeps it at 10 px or more (see `svg`)
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
})
FONT_MIN = 9.0  # the smallest font (pt) any figure uses
PX_MIN = 10.0  # the smallest text a reader should get on screen (CSS px)
WIDTH = 4.4  # inches: narrow enough that a 360 px phone shows FONT_MIN at PX_MIN without scrolling
_HEAD = re.compile(r"^.*?(?=<svg)", re.S)
_VIEWBOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
# Ticks a reader of probability paper expects, thinned where the scale crowds them together.
PROBABILITIES = (0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.9, 0.99, 0.999)


def svg(fig: Figure, label: str) -> str:
    """The figure as inline SVG that scales with its container but never below the width at which
    its smallest text reads PX_MIN px: the SVG's text scales with its viewBox, so an unbounded
    shrink made 5 px text on a phone. Below that width the figure scrolls inside its card."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = _HEAD.sub("", buf.getvalue(), count=1)
    found = _VIEWBOX.search(text)
    least = float(found.group(1)) * PX_MIN / FONT_MIN if found else 0.0
    # An accessible name for the picture, and no fixed size: the page's CSS sets the width.
    safe = label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    head = f'<svg role="img" aria-label="{safe}" class="plot" style="min-width: {math.ceil(least)}px" '
    return text.replace("<svg ", head, 1)


def figure(width: float = WIDTH, height: float = 3.0) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def unit_label(unit: str | None) -> str:
    return f" ({unit})" if unit else ""


def clean(values: Sequence[Any]) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def heading(title: str) -> str:
    """A plot's own heading: the part of its accessible title after the item's name (the page
    already shows the name; repeated, it made headings wider than the plot)."""
    return title.split(": ", 1)[-1][:1].upper() + title.split(": ", 1)[-1][1:]


def filled(values: Sequence[Any] | None) -> list[float] | None:
    """A band's bound with its gaps (None where a bound is undefined) carried forward, so the band
    is drawn continuous instead of as separate boxes."""
    if values is None:
        return None
    out: list[float] = []
    last = math.nan
    for v in values:
        last = last if v is None or not math.isfinite(float(v)) else float(v)
        out.append(last)
    return out


def probability_plot(paper: Paper, points: dict[str, list[float]], line: dict[str, list[Any]],
                     unit: str | None, title: str) -> str:
    """Median-rank points and the fitted CDF with its band, on the family's probability paper."""
    fig = figure(WIDTH, 3.8)
    ax = fig.add_subplot()
    t = clean(line["t"])
    if any(v is not None for v in line["lower"]):
        ax.fill_between(t, to_y(clean(line["lower"]), paper.y), to_y(clean(line["upper"]), paper.y),
                        color=BAND, alpha=0.45, linewidth=0, label="95% confidence band")
    ax.plot(t, to_y(clean(line["F"]), paper.y), color=ACCENT, linewidth=1.8, label="fitted model")
    if points["t"]:
        ax.plot(points["t"], to_y(points["F"], paper.y), "o", color=INK, markersize=4, label="failures (median ranks)")
    if paper.x == "log":
        log_axis(ax.xaxis, min(t), max(t))
    lo, hi = ax.get_ylim()
    lo, hi = max(lo, float(to_y(0.0005, paper.y))), min(hi, float(to_y(0.9995, paper.y)))
    ax.set_ylim(lo, hi)
    ticks = [p for p in PROBABILITIES if lo <= to_y(p, paper.y) <= hi]
    ax.yaxis.set_major_locator(FixedLocator([float(to_y(p, paper.y)) for p in ticks]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: _percent(y, paper)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel("unreliability F(t)")
    ax.set_title(f"{paper.name} probability plot")
    ax.legend(loc="lower right")
    return svg(fig, title)


def decade_label(x: float) -> str:
    """A log-axis tick as an engineer writes it: 0.1, 1, 10, 1000, then 10⁴, 10⁵ (one style per
    size, never matplotlib's mixed "1000" and "2×10²")."""
    if x <= 0:
        return ""
    e = math.floor(math.log10(x) + 1e-9)
    m = x / 10**e
    if -3 <= e <= 3:
        return f"{x:g}"
    sup = str(e).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"10{sup}" if abs(m - 1) < 1e-6 else f"{m:g}×10{sup}"


def log_axis(axis: Any, lo: float, hi: float) -> None:
    """A log axis labelled at whole decades, and at 2 and 5 times them when it spans under two
    decades (so there are always a few labels); minor ticks unlabelled, so labels never collide."""
    (axis.axes.set_xscale if axis is axis.axes.xaxis else axis.axes.set_yscale)("log")
    lo, hi = max(lo, 1e-300), max(hi, lo * 10)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    span = math.log10(hi / lo)
    steps = (1.0,) if span >= 3.5 else (1.0, 3.0) if span >= 2 else (1.0, 2.0, 5.0)
    ticks = [m * 10.0**e for e in range(first, last + 1) for m in steps if lo <= m * 10.0**e <= hi]
    if len(ticks) > 7:  # a very wide range: every other decade
        ticks = ticks[::2]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda x, _: decade_label(x)))
    axis.set_minor_formatter(NullFormatter())


def _percent(y: float, paper: Paper) -> str:
    p = float(from_y(y, paper.y)) * 100
    return f"{p:.1f}%" if p < 1 or p > 99 or abs(p - round(p)) > 0.05 else f"{p:.0f}%"


def life_curve(x: Sequence[Any], y: Sequence[Any], lower: Sequence[Any] | None, upper: Sequence[Any] | None,
               name: str, unit: str | None, title: str, colour: str = ACCENT,
               band_label: str = "95% confidence band", ylabel: str | None = None) -> str:
    """One curve of a life model (R(t), F(t) or h(t)) over time, with its band where it has one."""
    fig = figure(WIDTH, 2.8)
    ax = fig.add_subplot()
    if lower is not None and upper is not None:
        ax.fill_between(clean(x), clean(lower), clean(upper), color=BAND, alpha=0.5, linewidth=0, label=band_label)
    ax.plot(clean(x), clean(y), color=colour, linewidth=1.8, label=name)
    if ylabel is None:
        ax.set_ylim(0, 1.02)
    ax.set_ylabel(ylabel or name)
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_title(heading(name))
    if lower is not None:
        ax.legend(loc="best")
    return svg(fig, title)


def curve_with_band(t: Sequence[Any], y: Sequence[Any], lower: Sequence[Any] | None, upper: Sequence[Any] | None,
                    ylabel: str, unit: str | None, title: str, band_label: str = "95% confidence band",
                    mean: float | None = None) -> str:
    """A point curve over time with its band, and (A(t)) its mean over the horizon as a line."""
    fig = figure()
    ax = fig.add_subplot()
    if lower is not None and upper is not None:
        ax.fill_between(clean(t), clean(lower), clean(upper), color=BAND, alpha=0.5, linewidth=0,
                        label=band_label)
    ax.plot(clean(t), clean(y), color=ACCENT, linewidth=1.8, label=ylabel)
    if mean is not None:
        ax.axhline(mean, color=WARN, linestyle="--", linewidth=1.2, label="mean over the horizon")
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel(ylabel)
    ax.set_title(heading(title))
    fig.legend(loc="outside lower center", ncols=2)  # inside, it sat on the curve
    return svg(fig, title)


def step_survival(t: Sequence[Any], sf: Sequence[Any], lower: Sequence[Any] | None, upper: Sequence[Any] | None,
                  unit: str | None, title: str, confidence: float = 0.95) -> str:
    """A non-parametric reliability estimate (a step down at each failure time) with its band."""
    fig = figure()
    ax = fig.add_subplot()
    xs = [0.0, *clean(t)]
    if lower is not None and upper is not None:
        ax.fill_between(xs, [1.0, *clean(lower)], [1.0, *clean(upper)], step="post", color=BAND, alpha=0.5,
                        linewidth=0, label=f"{round(100 * confidence)}% confidence band")
    ax.step(xs, [1.0, *clean(sf)], where="post", color=ACCENT, linewidth=1.8, label="reliability R(t)")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel("reliability R(t)")
    ax.set_title(heading(title))
    ax.legend(loc="best")
    return svg(fig, title)


def bars(labels: Sequence[str], values: Sequence[float], ylabel: str, title: str,
         lower: Sequence[float] | None = None, upper: Sequence[float] | None = None,
         interval_label: str | None = None, xlabel: str | None = None,
         wider: tuple[Sequence[float], Sequence[float], str] | None = None) -> str:
    """Bars with an interval on each; `wider` (lower, upper, label) adds a second interval beside
    the first (a forecast's interval with parameter uncertainty beside the point model's)."""
    fig = figure(WIDTH, 3.0)
    ax = fig.add_subplot()
    xs = range(len(labels))
    ax.set_axisbelow(True)
    ax.bar(xs, values, color=ACCENT, width=0.6, label=ylabel)
    if lower is not None and upper is not None:
        err = [[max(v - lo, 0) for v, lo in zip(values, lower)], [max(hi - v, 0) for v, hi in zip(values, upper)]]
        shift = -0.12 if wider else 0.0
        ax.errorbar([x + shift for x in xs], values, yerr=err, fmt="none", ecolor=INK, elinewidth=1, capsize=4,
                    label=interval_label)
        if wider:
            lo2, hi2, label2 = wider
            err2 = [[max(v - lo, 0) for v, lo in zip(values, lo2)], [max(hi - v, 0) for v, hi in zip(values, hi2)]]
            ax.errorbar([x + 0.12 for x in xs], values, yerr=err2, fmt="none", ecolor=WARN, elinewidth=1.4,
                        capsize=4, label=label2)
        # below the axes: inside them the legend covered the last bars
        fig.legend(loc="outside lower center", ncols=2)
    ax.set_xticks(list(xs), list(labels))
    if xlabel:
        ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(heading(title))
    ax.grid(axis="x", visible=False)
    return svg(fig, title)


def cost_rate(t: Sequence[Any], rate: Sequence[Any], optimum_t: float | None, optimum_rate: float | None,
              run_to_failure: float | None, unit: str | None, title: str, currency: str | None = None,
              optimum_range: tuple[float, float] | None = None) -> str:
    """The cost rate against the interval; `optimum_range` shades where the optimum lies over the
    parameter uncertainty (5th–95th percentiles)."""
    fig = figure()
    ax = fig.add_subplot()
    money = currency or "cost units"  # the ISO 4217 code given with the costs, or plainly none
    if optimum_range is not None:
        ends = clean(t)
        right = min(optimum_range[1], max((x for x in ends if math.isfinite(x)), default=optimum_range[0]))
        ax.axvspan(optimum_range[0], right, color=BAND, alpha=0.6, label="optimum, 90% range over the parameters")
    ax.plot(clean(t), clean(rate), color=ACCENT, linewidth=1.8, label=f"{money} {per_time(unit)}")
    if run_to_failure is not None:
        ax.axhline(run_to_failure, color=MUTED, linestyle="--", linewidth=1, label="run to failure")
    if optimum_t is not None and optimum_rate is not None:
        ax.plot([optimum_t], [optimum_rate], "o", color=WARN, markersize=7, label="optimum", zorder=5)
        ax.annotate(f"optimum {optimum_t:.4g}{(' ' + unit) if unit else ''}", (optimum_t, optimum_rate),
                    xytext=(8, 12), textcoords="offset points", color=WARN)
    # The rate explodes as the interval shrinks: show the region around the optimum and run to failure.
    ceiling = max(v for v in (run_to_failure, optimum_rate) if v is not None) if (run_to_failure or optimum_rate) \
        else None
    if ceiling:
        ax.set_ylim(0, 2.0 * ceiling)
    ax.set_xlabel(f"replacement interval{unit_label(unit)}")
    ax.set_ylabel(f"cost ({money} {per_time(unit)})")
    ax.set_title(heading(title))
    ax.legend(loc="best")
    return svg(fig, title)


def mean_cumulative(t: Sequence[float], mcf: Sequence[Any], lower: Sequence[Any] | None,
                    upper: Sequence[Any] | None, model_t: Sequence[float], model: Sequence[float] | None,
                    unit: str | None, title: str, model_label: str, ylabel: str) -> str:
    """The data's mean cumulative function (a step at each event time) with its band, against the
    fitted model's expected cumulative events."""
    fig = figure()
    ax = fig.add_subplot()
    xs = [0.0, *t]
    if lower is not None and upper is not None:
        ax.fill_between(xs, [0.0, *(filled(lower) or [])], [0.0, *(filled(upper) or [])], step="post", color=BAND,
                        alpha=0.5, linewidth=0, label="95% confidence band")
    ax.step(xs, [0.0, *clean(mcf)], where="post", color=INK, linewidth=1.3, label="observed (MCF)")
    if model is not None:
        ax.plot(clean(model_t), clean(model), color=ACCENT, linewidth=1.8, label=model_label)
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel(f"cumulative {ylabel}")
    ax.set_title(heading(title))
    ax.legend(loc="upper left")
    return svg(fig, title)


def degradation_paths(paths: list[dict[str, Any]], threshold: float, unit: str | None, title: str) -> str:
    """Each unit's readings and fitted path to its crossing, and the failure threshold."""
    fig = figure(WIDTH, 3.4)
    ax = fig.add_subplot()
    colours = matplotlib.colormaps["tab10"]
    for k, p in enumerate(paths):
        c = colours(k % 10)
        if p["x"]:
            ax.plot(p["x"], p["y"], "o", color=c, markersize=3.5)
        ax.plot(p["fit_x"], p["fit_y"], "-", color=c, linewidth=1.2, label=str(p["id"]))
    ax.axhline(threshold, color=WARN, linestyle="--", linewidth=1.2, label=f"threshold {threshold:g}")
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel("measured degradation")
    ax.set_title(heading(title))
    ax.legend(loc="best", ncols=2 if len(paths) > 6 else 1)
    return svg(fig, title)


def diagram(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], title: str) -> str:
    """A block diagram drawn left to right: each node in the column of its longest path from the
    input, blocks as boxes, k-out-of-n votes as circles, edges as arrows."""
    ids = [n["id"] for n in nodes]
    succ: dict[str, list[str]] = {i: [] for i in ids}
    pred: dict[str, list[str]] = {i: [] for i in ids}
    for e in edges:
        if e["source"] in succ and e["target"] in pred:
            succ[e["source"]].append(e["target"])
            pred[e["target"]].append(e["source"])
    layer: dict[str, int] = {}
    order = [i for i in ids if not pred[i]]
    seen: set[str] = set()
    while order:  # longest-path layering over a DAG (Kahn's order)
        i = order.pop(0)
        seen.add(i)
        layer[i] = max((layer[p] + 1 for p in pred[i] if p in layer), default=0)
        for s in succ[i]:
            if all(p in seen for p in pred[s]) and s not in seen and s not in order:
                order.append(s)
    for i in ids:  # anything on a cycle or unreachable goes last, still drawn
        layer.setdefault(i, max(layer.values(), default=0) + 1)
    columns: dict[int, list[str]] = {}
    for i in ids:
        columns.setdefault(layer[i], []).append(i)
    depth = max(len(c) for c in columns.values())
    pos = {i: (float(x), (len(col) - 1) / 2.0 - r) for x, col in columns.items() for r, i in enumerate(col)}
    fig = figure(min(0.4 + 1.15 * len(columns), 12.0), min(0.4 + 1.0 * depth, 9.0))
    ax = fig.add_subplot()
    ax.set_axis_off()
    by_id = {n["id"]: n for n in nodes}
    for e in edges:
        if e["source"] in pos and e["target"] in pos:
            (x0, y0), (x1, y1) = pos[e["source"]], pos[e["target"]]
            ax.annotate("", xy=(x1 - 0.37, y1), xytext=(x0 + 0.37, y0),
                        arrowprops={"arrowstyle": "-|>", "color": MUTED, "linewidth": 1.0, "shrinkA": 0,
                                    "shrinkB": 0})
    for i, (x, y) in pos.items():
        n = by_id[i]
        kind = n.get("type")
        if kind in ("input", "output"):
            ax.plot([x], [y], "o", color=INK, markersize=7)
            ax.text(x, y - 0.22, kind, ha="center", va="top", color=MUTED)
            continue
        if kind == "knode":
            k = n.get("k") or len(pred[i])
            ax.add_patch(patches.Circle((x, y), 0.2, facecolor="white", edgecolor=ACCENT, linewidth=1.4))
            ax.text(x, y, f"{n.get('n', 1)}/{k}", ha="center", va="center", color=ACCENT, fontweight="bold")
            continue
        face = "#fdecea" if n.get("placeholder") else "#eef4fb"
        ax.add_patch(patches.FancyBboxPatch((x - 0.36, y - 0.3), 0.72, 0.6,
                                                       boxstyle="round,pad=0.02", facecolor=face,
                                                       edgecolor=ACCENT, linewidth=1.2))
        # wrapped, not cut: "Cooling water pump A/B/C" cut to 13 characters read the same three times
        label = "\n".join(textwrap.wrap(str(n.get("label") or i), 12, max_lines=3, placeholder="…"))
        ax.text(x, y, label, ha="center", va="center", color=INK, fontsize=FONT_MIN, linespacing=1.0)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
    ax.set_ylim(min(ys) - 0.5, max(ys) + 0.5)
    ax.set_aspect("equal")
    return svg(fig, title)
