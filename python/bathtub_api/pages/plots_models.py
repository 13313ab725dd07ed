"""The pictures of fitted models beyond one life distribution: a Cox model's adjusted survival
curves and hazard-ratio forest plot, an ALT's stress–life plot, and reliability growth on log-log
axes with its MTBF curves. Like `plots`, each function only draws numbers it is given."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import matplotlib

from bathtub_api.pages.plots import (
    ACCENT,
    BAND,
    INK,
    MUTED,
    WARN,
    WIDTH,
    clean,
    figure,
    filled,
    heading,
    log_axis,
    svg,
    unit_label,
)

COLOURS = matplotlib.colormaps["tab10"]


def forest(names: Sequence[str], ratios: Sequence[float], lower: Sequence[float], upper: Sequence[float],
           confidence: float, title: str) -> str:
    """Hazard ratios with their intervals on a log axis, one row per covariate, and the line of no
    effect at 1 (lifelines' forest plot)."""
    fig = figure(WIDTH, 0.9 + 0.32 * len(names))
    ax = fig.add_subplot()
    ys = list(range(len(names)))[::-1]
    for y, r, lo, hi in zip(ys, ratios, lower, upper):
        significant = lo > 1 or hi < 1
        ax.plot([lo, hi], [y, y], color=WARN if significant else ACCENT, linewidth=1.6)
        ax.plot([r], [y], "s", color=WARN if significant else ACCENT, markersize=5)
    ax.axvline(1.0, color=MUTED, linestyle="--", linewidth=1)
    ax.set_yticks(ys, list(names))
    log_axis(ax.xaxis, min(min(lower), 1.0) * 0.9, max(max(upper), 1.0) * 1.1)
    ax.set_xlabel(f"hazard ratio ({round(100 * confidence)}% interval; red: excludes 1)")
    ax.grid(axis="y", visible=False)
    ax.set_title(heading(title))
    return svg(fig, title)


def adjusted_survival(curves: Sequence[dict[str, Any]], unit: str | None, title: str) -> str:
    """Survival curves of the fitted Cox model for chosen covariate values (steps at event times);
    curves: [{label, x, sf}]."""
    fig = figure(WIDTH, 3.0)
    ax = fig.add_subplot()
    for k, c in enumerate(curves):
        ax.step(clean(c["x"]), clean(c["sf"]), where="post", color=INK if k == 0 else COLOURS(k), linewidth=1.6,
                label=c["label"], linestyle="--" if k == 0 else "-")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel("survival S(t)")
    ax.set_title(heading(title))
    ax.legend(loc="lower left")
    return svg(fig, title)


def stress_life(stress_life: dict[str, Any], use: dict[str, Any] | None, stress_unit: str, unit: str | None,
                title: str) -> str:
    """Each test level's failures (dots) and suspensions (open), the fitted life L(S) with its
    band and the B10 life along the stress, and the life at the use stress."""
    fig = figure(WIDTH, 3.4)
    ax = fig.add_subplot()
    ys: list[float] = []
    for p in stress_life.get("points") or []:
        if p["failures"]:
            ax.plot([p["stress"]] * len(p["failures"]), p["failures"], "o", color=INK, markersize=3, alpha=0.7)
        if p["censored"]:
            ax.plot([p["stress"]] * len(p["censored"]), p["censored"], "o", mfc="none", color=MUTED, markersize=3.5)
        ys += p["failures"] + p["censored"]
    for k, line in enumerate(stress_life.get("lines") or []):
        s = clean(line["stress"])
        if line.get("lower") and line.get("upper"):
            ax.fill_between(s, filled(line["lower"]) or [], filled(line["upper"]) or [], color=BAND, alpha=0.5,
                            linewidth=0, label="95% band" if k == 0 else None)
        ax.plot(s, clean(line["life"]), color=ACCENT, linewidth=1.8,
                label=f"life: {stress_life.get('life_is', 'characteristic')}" if k == 0 else None)
        if line.get("b10"):
            ax.plot(s, clean(line["b10"]), color=ACCENT, linestyle=":", linewidth=1.4,
                    label="B10 life" if k == 0 else None)
        ys += [v for v in line["life"] + (line.get("lower") or []) if v is not None]
    if use and use.get("life"):
        life = use["life"]
        ax.plot([use["stress"]], [life["value"]], "D", color=WARN, markersize=7, zorder=5, label="use level")
        ys.append(life["value"])
    failures = [p for p in ys if p and p > 0]
    if failures:
        log_axis(ax.yaxis, min(failures) * 0.8, max(failures) * 1.25)
    ax.set_xlabel(stress_unit)
    ax.set_ylabel(f"life{unit_label(unit)}")
    ax.set_title(heading(title))
    fig.legend(loc="outside lower center", ncols=2)
    return svg(fig, title)


def growth_loglog(t: Sequence[float], observed: Sequence[float], model_t: Sequence[float],
                  model: Sequence[float] | None, unit: str | None, ylabel: str, title: str) -> str:
    """Cumulative failures against time on log-log axes: a power law (Crow-AMSAA) is a straight
    line of slope beta, the plot reliability-growth engineers read first."""
    fig = figure(WIDTH, 3.2)
    ax = fig.add_subplot()
    pts = [(x, y) for x, y in zip(t, observed) if x > 0 and y > 0]
    ax.plot([x for x, _ in pts], [y for _, y in pts], "o", color=INK, markersize=3.5, label="observed")
    lo_x, hi_x = min(x for x, _ in pts), max(x for x, _ in pts)
    lo_y, hi_y = min(y for _, y in pts), max(y for _, y in pts)
    if model is not None:
        line = [(x, y) for x, y in zip(model_t, model) if x > 0 and y is not None and y > 0]
        ax.plot([x for x, _ in line], [y for _, y in line], color=ACCENT, linewidth=1.8, label="fitted power law")
        lo_x, hi_x = min(lo_x, line[0][0]), max(hi_x, line[-1][0])
        lo_y, hi_y = min(lo_y, line[0][1]), max(hi_y, line[-1][1])
    log_axis(ax.xaxis, lo_x * 0.9, hi_x * 1.1)
    log_axis(ax.yaxis, lo_y * 0.9, hi_y * 1.1)
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel(f"cumulative {ylabel}")
    ax.set_title(heading(title))
    ax.legend(loc="upper left")
    return svg(fig, title)


def mtbf_curves(t: Sequence[float], cumulative: Sequence[float], instantaneous: Sequence[float],
                unit: str | None, title: str) -> str:
    """Cumulative and instantaneous MTBF of the fitted growth model against time."""
    fig = figure(WIDTH, 2.8)
    ax = fig.add_subplot()
    ax.plot(clean(t), clean(cumulative), color=ACCENT, linewidth=1.8, label="cumulative MTBF")
    ax.plot(clean(t), clean(instantaneous), color=WARN, linewidth=1.8, label="instantaneous MTBF")
    top = max((v for v in instantaneous + cumulative if v is not None and math.isfinite(v)), default=1.0)
    ax.set_ylim(0, top * 1.05)
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel(f"MTBF{unit_label(unit)}")
    ax.set_title(heading(title))
    ax.legend(loc="upper left")
    return svg(fig, title)


# Mode colours of a stacked incidence plot: distinct in print and for the common colour blindnesses.
MODE_COLOURS = ("#1a5fb4", "#e66100", "#2ec27e", "#9141ac", "#c0392b", "#865e3c", "#5e5c64", "#f6d32d")


def stacked_incidence(t: Sequence[float], stacks: Sequence[tuple[str, Sequence[float]]], unit: str | None,
                      title: str) -> str:
    """Each failure mode's cumulative incidence stacked on the modes below it (steps after each time):
    the top edge is the chance of having failed by any mode, 1 - R(t)."""
    fig = figure()
    ax = fig.add_subplot()
    xs = [0.0, *clean(t)]
    base = [0.0] * len(xs)
    for k, (name, values) in enumerate(stacks):
        top = [b + v for b, v in zip(base, [0.0, *clean(values)], strict=True)]
        ax.fill_between(xs, base, top, step="post", color=MODE_COLOURS[k % len(MODE_COLOURS)], alpha=0.75,
                        linewidth=0, label=name)
        base = top
    ax.step(xs, base, where="post", color=INK, linewidth=1.0, label="any mode")
    ax.set_ylim(0, min(1.02, max(0.05, max(base) * 1.1)))
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel("cumulative incidence")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return svg(fig, title)
