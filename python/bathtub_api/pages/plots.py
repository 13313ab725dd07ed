"""The pictures of share pages and reports: matplotlib figures (Agg, no pyplot state, so threads
may draw at once) written as inline SVG. Each function takes numbers a record or the library
gave and only draws them."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before anything imports pyplot: never a GUI backend in the service

from matplotlib import patches
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from bathtub.life.paper import Paper, from_y, to_y

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
    "legend.fontsize": 8,
})
_HEAD = re.compile(r"^.*?(?=<svg)", re.S)
# Ticks a reader of probability paper expects, thinned where the scale crowds them together.
PROBABILITIES = (0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.9, 0.99, 0.999)


def _svg(fig: Figure, label: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    svg = _HEAD.sub("", buf.getvalue(), count=1)
    # An accessible name for the picture, and no fixed size: the page's CSS sets the width.
    safe = label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return svg.replace("<svg ", f'<svg role="img" aria-label="{safe}" class="plot" ', 1)


def _figure(width: float = 6.4, height: float = 3.4) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _unit(unit: str | None) -> str:
    return f" ({unit})" if unit else ""


def _clean(values: Sequence[Any]) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def probability_plot(paper: Paper, points: dict[str, list[float]], line: dict[str, list[Any]],
                     unit: str | None, title: str) -> str:
    """Median-rank points and the fitted CDF with its band, on the family's probability paper."""
    fig = _figure(6.4, 4.2)
    ax = fig.add_subplot()
    t = _clean(line["t"])
    if any(v is not None for v in line["lower"]):
        ax.fill_between(t, to_y(_clean(line["lower"]), paper.y), to_y(_clean(line["upper"]), paper.y),
                        color=BAND, alpha=0.45, linewidth=0, label="95% confidence band")
    ax.plot(t, to_y(_clean(line["F"]), paper.y), color=ACCENT, linewidth=1.8, label="fitted model")
    if points["t"]:
        ax.plot(points["t"], to_y(points["F"], paper.y), "o", color=INK, markersize=4, label="failures (median ranks)")
    if paper.x == "log":
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    lo, hi = ax.get_ylim()
    lo, hi = max(lo, float(to_y(0.0005, paper.y))), min(hi, float(to_y(0.9995, paper.y)))
    ax.set_ylim(lo, hi)
    ticks = [p for p in PROBABILITIES if lo <= to_y(p, paper.y) <= hi]
    ax.yaxis.set_major_locator(FixedLocator([float(to_y(p, paper.y)) for p in ticks]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: _percent(y, paper)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"time{_unit(unit)}")
    ax.set_ylabel("unreliability F(t)")
    ax.set_title(f"{paper.name} probability plot")
    ax.legend(loc="lower right")
    return _svg(fig, title)


def _percent(y: float, paper: Paper) -> str:
    p = float(from_y(y, paper.y)) * 100
    return f"{p:.1f}%" if p < 1 or p > 99 or abs(p - round(p)) > 0.05 else f"{p:.0f}%"


def reliability_and_hazard(x: Sequence[Any], sf: Sequence[Any], hf: Sequence[Any], unit: str | None,
                           title: str) -> str:
    fig = _figure(6.4, 2.8)
    left, right = fig.subplots(1, 2)
    left.plot(_clean(x), _clean(sf), color=ACCENT, linewidth=1.8)
    left.set_ylim(0, 1.02)
    left.set_title("Reliability R(t)")
    left.set_xlabel(f"time{_unit(unit)}")
    right.plot(_clean(x), _clean(hf), color=WARN, linewidth=1.8)
    right.set_title("Hazard rate h(t)")
    right.set_xlabel(f"time{_unit(unit)}")
    right.set_ylabel(f"failures per{(' ' + unit.rstrip('s')) if unit else ' unit time'}")
    return _svg(fig, title)


def curve_with_band(t: Sequence[Any], y: Sequence[Any], lower: Sequence[Any] | None, upper: Sequence[Any] | None,
                    ylabel: str, unit: str | None, title: str, band_label: str = "95% confidence band") -> str:
    fig = _figure()
    ax = fig.add_subplot()
    if lower is not None and upper is not None:
        ax.fill_between(_clean(t), _clean(lower), _clean(upper), color=BAND, alpha=0.5, linewidth=0,
                        label=band_label)
    ax.plot(_clean(t), _clean(y), color=ACCENT, linewidth=1.8, label=ylabel)
    ax.set_xlabel(f"time{_unit(unit)}")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="best")
    return _svg(fig, title)


def step_survival(t: Sequence[Any], sf: Sequence[Any], lower: Sequence[Any] | None, upper: Sequence[Any] | None,
                  unit: str | None, title: str, confidence: float = 0.95) -> str:
    """A non-parametric reliability estimate (a step down at each failure time) with its band."""
    fig = _figure()
    ax = fig.add_subplot()
    xs = [0.0, *_clean(t)]
    if lower is not None and upper is not None:
        ax.fill_between(xs, [1.0, *_clean(lower)], [1.0, *_clean(upper)], step="post", color=BAND, alpha=0.5,
                        linewidth=0, label=f"{round(100 * confidence)}% confidence band")
    ax.step(xs, [1.0, *_clean(sf)], where="post", color=ACCENT, linewidth=1.8, label="reliability R(t)")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"time{_unit(unit)}")
    ax.set_ylabel("reliability R(t)")
    ax.set_title(title)
    ax.legend(loc="best")
    return _svg(fig, title)


def bars(labels: Sequence[str], values: Sequence[float], ylabel: str, title: str,
         lower: Sequence[float] | None = None, upper: Sequence[float] | None = None,
         interval_label: str | None = None, xlabel: str | None = None) -> str:
    fig = _figure(6.4, 3.0)
    ax = fig.add_subplot()
    xs = range(len(labels))
    ax.set_axisbelow(True)
    ax.bar(xs, values, color=ACCENT, width=0.6, label=ylabel)
    if lower is not None and upper is not None:
        err = [[max(v - lo, 0) for v, lo in zip(values, lower)], [max(hi - v, 0) for v, hi in zip(values, upper)]]
        ax.errorbar(xs, values, yerr=err, fmt="none", ecolor=INK, elinewidth=1, capsize=4, label=interval_label)
        ax.legend(loc="best")
    ax.set_xticks(list(xs), list(labels))
    if xlabel:
        ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="x", visible=False)
    return _svg(fig, title)


def cost_rate(t: Sequence[Any], rate: Sequence[Any], optimum_t: float | None, optimum_rate: float | None,
              run_to_failure: float | None, unit: str | None, title: str) -> str:
    fig = _figure()
    ax = fig.add_subplot()
    ax.plot(_clean(t), _clean(rate), color=ACCENT, linewidth=1.8, label="cost per unit time")
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
    ax.set_xlabel(f"replacement interval{_unit(unit)}")
    ax.set_ylabel("cost per unit time")
    ax.set_title(title)
    ax.legend(loc="best")
    return _svg(fig, title)


def mean_cumulative(t: Sequence[float], mcf: Sequence[Any], lower: Sequence[Any] | None,
                    upper: Sequence[Any] | None, model_t: Sequence[float], model: Sequence[float] | None,
                    unit: str | None, title: str, model_label: str, ylabel: str) -> str:
    """The data's mean cumulative function (a step at each event time) with its band, against the
    fitted model's expected cumulative events."""
    fig = _figure()
    ax = fig.add_subplot()
    xs = [0.0, *t]
    if lower is not None and upper is not None:
        ax.fill_between(xs, [0.0, *_clean(lower)], [0.0, *_clean(upper)], step="post", color=BAND, alpha=0.5,
                        linewidth=0, label="95% confidence band")
    ax.step(xs, [0.0, *_clean(mcf)], where="post", color=INK, linewidth=1.3, label="observed (MCF)")
    if model is not None:
        ax.plot(_clean(model_t), _clean(model), color=ACCENT, linewidth=1.8, label=model_label)
    ax.set_xlabel(f"time{_unit(unit)}")
    ax.set_ylabel(f"cumulative {ylabel}")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return _svg(fig, title)


def degradation_paths(paths: list[dict[str, Any]], threshold: float, unit: str | None, title: str) -> str:
    """Each unit's readings and fitted path to its crossing, and the failure threshold."""
    fig = _figure(6.4, 3.8)
    ax = fig.add_subplot()
    colours = matplotlib.colormaps["tab10"]
    for k, p in enumerate(paths):
        c = colours(k % 10)
        if p["x"]:
            ax.plot(p["x"], p["y"], "o", color=c, markersize=3.5)
        ax.plot(p["fit_x"], p["fit_y"], "-", color=c, linewidth=1.2, label=str(p["id"]))
    ax.axhline(threshold, color=WARN, linestyle="--", linewidth=1.2, label=f"threshold {threshold:g}")
    ax.set_xlabel(f"time{_unit(unit)}")
    ax.set_ylabel("measured degradation")
    ax.set_title(title)
    ax.legend(loc="best", ncols=2 if len(paths) > 6 else 1)
    return _svg(fig, title)


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
    fig = _figure(min(1.5 + 1.6 * len(columns), 10.0), min(1.2 + 0.9 * depth, 8.0))
    ax = fig.add_subplot()
    ax.set_axis_off()
    by_id = {n["id"]: n for n in nodes}
    for e in edges:
        if e["source"] in pos and e["target"] in pos:
            (x0, y0), (x1, y1) = pos[e["source"]], pos[e["target"]]
            ax.annotate("", xy=(x1 - 0.28, y1), xytext=(x0 + 0.28, y0),
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
        ax.add_patch(patches.FancyBboxPatch((x - 0.27, y - 0.17), 0.54, 0.34,
                                                       boxstyle="round,pad=0.02", facecolor=face,
                                                       edgecolor=ACCENT, linewidth=1.2))
        label = str(n.get("label") or i)
        ax.text(x, y, label if len(label) <= 14 else label[:13] + "…", ha="center", va="center", color=INK,
                fontsize=8)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - 0.45, max(xs) + 0.45)
    ax.set_ylim(min(ys) - 0.45, max(ys) + 0.45)
    ax.set_aspect("equal")
    return _svg(fig, title)


# Mode colours of a stacked incidence plot: distinct in print and for the common colour blindnesses.
MODE_COLOURS = ("#1a5fb4", "#e66100", "#2ec27e", "#9141ac", "#c0392b", "#865e3c", "#5e5c64", "#f6d32d")


def stacked_incidence(t: Sequence[float], stacks: Sequence[tuple[str, Sequence[float]]], unit: str | None,
                      title: str) -> str:
    """Each failure mode's cumulative incidence stacked on the modes below it (steps after each time):
    the top edge is the chance of having failed by any mode, 1 - R(t)."""
    fig = _figure()
    ax = fig.add_subplot()
    xs = [0.0, *_clean(t)]
    base = [0.0] * len(xs)
    for k, (name, values) in enumerate(stacks):
        top = [b + v for b, v in zip(base, [0.0, *_clean(values)], strict=True)]
        ax.fill_between(xs, base, top, step="post", color=MODE_COLOURS[k % len(MODE_COLOURS)], alpha=0.75,
                        linewidth=0, label=name)
        base = top
    ax.step(xs, base, where="post", color=INK, linewidth=1.0, label="any mode")
    ax.set_ylim(0, min(1.02, max(0.05, max(base) * 1.1)))
    ax.set_xlabel(f"time{_unit(unit)}")
    ax.set_ylabel("cumulative incidence")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return _svg(fig, title)
