"""The pictures of operations: a run's downtime Pareto and cost breakdown, and a failure-finding
task's unavailability against its test interval. Like `plots`, each only draws what it is given."""

from __future__ import annotations

from collections.abc import Sequence

from bathtub_api.pages.plots import ACCENT, BAND, INK, MUTED, WARN, WIDTH, clean, figure, heading, svg, unit_label


def pareto(labels: Sequence[str], shares: Sequence[float], title: str) -> str:
    """Blocks' shares of system downtime (%), largest first, with the cumulative share."""
    order = sorted(range(len(labels)), key=lambda k: -shares[k])
    names = [labels[k] for k in order]
    values = [shares[k] for k in order]
    fig = figure(WIDTH, 0.9 + 0.3 * len(names))
    ax = fig.add_subplot()
    ys = list(range(len(names)))[::-1]
    ax.barh(ys, values, color=ACCENT, height=0.6)
    ax.set_yticks(ys, names)
    ax.set_xlabel("share of system downtime (%)")
    ax.set_xlim(0, max(max(values, default=0.0) * 1.1, 1.0))
    ax.grid(axis="y", visible=False)
    ax.set_axisbelow(True)
    ax.set_title(heading(title))
    return svg(fig, title)


def cost_breakdown(blocks: Sequence[str], kinds: Sequence[str], amounts: Sequence[Sequence[float]],
                   title: str, currency: str | None = None) -> str:
    """Expected cost per block over the horizon, stacked by kind; amounts[kind][block]."""
    fig = figure(WIDTH, 0.9 + 0.3 * len(blocks) + 0.3)
    ax = fig.add_subplot()
    ys = list(range(len(blocks)))[::-1]
    left = [0.0] * len(blocks)
    for k, (kind, row) in enumerate(zip(kinds, amounts)):
        ax.barh(ys, row, left=left, height=0.6, label=kind, color=(ACCENT, WARN, MUTED, INK, "#f0b429")[k % 5])
        left = [a + b for a, b in zip(left, row)]
    ax.set_yticks(ys, list(blocks))
    ax.set_xlabel(f"expected cost over the horizon ({currency or 'cost units'})")
    ax.grid(axis="y", visible=False)
    ax.set_axisbelow(True)
    ax.set_title(heading(title))
    fig.legend(loc="outside lower center", ncols=min(len(kinds), 3))
    return svg(fig, title)


def unavailability(t: Sequence[float], q: Sequence[float], interval: float | None, target: float | None,
                   unit: str | None, title: str) -> str:
    """Mean unavailability of a hidden function against the test interval, the target and the
    interval that meets it."""
    fig = figure(WIDTH, 2.8)
    ax = fig.add_subplot()
    ax.plot(clean(t), [100.0 * v for v in clean(q)], color=ACCENT, linewidth=1.8, label="mean unavailability")
    if target is not None:
        ax.axhline(100.0 * target, color=MUTED, linestyle="--", linewidth=1, label="target")
    if interval is not None and target is not None:
        ax.plot([interval], [100.0 * target], "o", color=WARN, markersize=7, zorder=5, label="interval meeting it")
    ax.set_ylim(0, None)
    ax.set_xlim(0, None)
    ax.set_xlabel(f"test interval{unit_label(unit)}")
    ax.set_ylabel("mean unavailability (%)")
    ax.set_title(heading(title))
    ax.legend(loc="upper left")
    return svg(fig, title)


def interval_availability(start: Sequence[float], end: Sequence[float], mean: Sequence[float],
                          lower: Sequence[float], upper: Sequence[float], overall: float | None,
                          unit: str | None, title: str) -> str:
    """A run's mean availability over each interval of its grid (a step held across the
    interval) with its 95% band, and the mean over the horizon as a line; the steps' time
    average is that line, so a PM window between grid points shows as a lower step."""
    edges = [*clean(start)[:1], *clean(end)]
    fig = figure()
    ax = fig.add_subplot()
    step_lo = [*clean(lower), clean(lower)[-1]] if lower else []
    step_hi = [*clean(upper), clean(upper)[-1]] if upper else []
    if step_lo and step_hi:
        ax.fill_between(edges, step_lo, step_hi, step="post", color=BAND, alpha=0.5, linewidth=0,
                        label="95% confidence band")
    # baseline None: steps only, no drop to 0 at the ends (the axis then fits the curve and its band)
    ax.stairs(clean(mean), edges, baseline=None, color=ACCENT, linewidth=1.8,
              label="mean availability over each interval")
    if overall is not None:
        ax.axhline(overall, color=WARN, linestyle="--", linewidth=1.2, label="mean over the horizon")
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.set_ylabel("availability")
    ax.set_title(heading(title))
    fig.legend(loc="outside lower center", ncols=1)  # one column: two labels side by side overflow a phone
    return svg(fig, title)


def crossings(names: Sequence[str], ages: Sequence[float], median: Sequence[float], lower: Sequence[float | None],
              upper: Sequence[float | None], probability: float, unit: str | None, title: str) -> str:
    """Tracked items, soonest first: each item's age (its last measurement, a dot) and its predicted
    threshold crossing (a diamond at the median, a line over the central interval)."""
    fig = figure(WIDTH, 1.2 + 0.3 * len(names))
    ax = fig.add_subplot()
    ys = list(range(len(names)))[::-1]
    for y, lo, hi, m in zip(ys, lower, upper, median):
        ax.plot([lo if lo is not None else m, hi if hi is not None else m], [y, y], color=ACCENT, linewidth=2.2,
                solid_capstyle="butt")
    ax.plot(clean(ages), ys, "o", color=MUTED, markersize=5, label="age (last measurement)")
    ax.plot(clean(median), ys, "D", color=WARN, markersize=6, label="predicted crossing (median)")
    ax.plot([], [], color=ACCENT, linewidth=2.2, label=f"{round(100 * probability)}% interval")
    ax.set_yticks(ys, list(names))
    ax.set_ylim(-0.6, len(names) - 0.4)  # room above the top item's marks
    ax.set_xlim(0, None)
    ax.set_xlabel(f"time{unit_label(unit)}")
    ax.grid(axis="y", visible=False)
    ax.set_title(heading(title))
    fig.legend(loc="outside lower center", ncols=1)
    return svg(fig, title)
