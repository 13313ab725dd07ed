"""The one bench harness: interleaved repeats of ours and a baseline, medians with their
spread, the machine and its load, written to `bench/results/<bench>.json`.

Why interleaved: on a shared or throttling machine, running all of A then all of B lets a
neighbour's burst or a frequency change land on one side only. Alternating A, B, A, B...
exposes both to the same conditions, and the ratio is taken per round (A_i / B_i) so a slow
round slows both sides of its own ratio. A README figure is such a ratio with its min–max
over the rounds, beside the absolute figure and the machine it came from.

    from harness import Bench
    b = Bench("engine_availability")
    rounds = b.interleave({"engine": run_engine, "bare loop": run_bare}, repeats=7)
    b.figure("engine events/CPU-s vs bare loop", rounds, "engine", "bare loop", key="rate",
             unit="events/s", higher_is_better=True)
    b.write()

A case is a zero-argument callable returning a dict of measured quantities (e.g.
{"seconds": ..., "rate": ...}); `timed` wraps a plain function into one, and `kept` keeps its
last answer for `Bench.check`, which compares ours with a peer's and exits non-zero beyond the
stated tolerance (a bench never reports the speed of a wrong answer).
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"

Case = Callable[[], dict[str, float]]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "system": f"{platform.system()} {platform.release()}",
            "python": platform.python_version()}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


MIN_ROUND = 0.2  # seconds: `timed(..., calls=None)` batches calls up to at least this much a round


def timed(fn: Callable[[], Any], work: Callable[[Any], float] | None = None, calls: int | None = 1) -> Case:
    """A case timing `fn`: wall and CPU seconds of this process (all its threads) per call, and
    `rate` = work(result) per wall second and `cpu_rate` per CPU second when `work` is given.

    `calls` > 1 times that many calls together; None sets it at the first (warm-up) call, so
    a round lasts at least MIN_ROUND. Work of a few milliseconds needs it on a shared machine:
    a single short call often runs within one time slice while a longer one on the other side
    of the ratio waits for the CPU, which biases the ratio (seen: 10× where CPU time says 1.4×)."""
    batch = calls

    def case() -> dict[str, float]:
        nonlocal batch
        n = batch or 1
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            out = fn()
        wall, cpu = (time.perf_counter() - t0) / n, (time.process_time() - c0) / n
        if batch is None:
            batch = max(1, math.ceil(MIN_ROUND / max(wall, 1e-9)))
        m = {"seconds": wall, "cpu_seconds": cpu, "calls": n}
        if work is not None:
            w = float(work(out))
            m |= {"work": w, "rate": w / wall, "cpu_rate": w / cpu if cpu > 0 else float("nan")}
        return m

    return case


def kept(store: dict[str, Any], name: str, fn: Callable[[], Any]) -> Callable[[], Any]:
    """`fn`, leaving its last output in `store[name]`: the answers the correctness checks compare
    after the timed rounds (wrap it in `timed`)."""

    def run() -> Any:
        store[name] = fn()
        return store[name]

    return run


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


class Bench:
    """One bench script's run: its rounds, figures and the machine they came from."""

    def __init__(self, name: str, command: str | None = None) -> None:
        self.name = name
        # the command as this run was invoked (its arguments set the rounds, sizes, ...)
        self.command = command or " ".join([f"python bench/{name}.py", *sys.argv[1:]])
        self.started = datetime.now(UTC).isoformat(timespec="seconds")
        self.load_before = load()
        self.figures: list[dict[str, Any]] = []
        self.checks: list[dict[str, Any]] = []

    def interleave(self, cases: dict[str, Case], repeats: int, warmup: int = 1) -> dict[str, list[dict[str, float]]]:
        """Run every case once per round, `repeats` rounds, after `warmup` unrecorded ones."""
        for _ in range(warmup):
            for fn in cases.values():
                fn()
        rounds: dict[str, list[dict[str, float]]] = {k: [] for k in cases}
        for _ in range(repeats):
            for k, fn in cases.items():
                rounds[k].append(fn())
        return rounds

    def figure(self, label: str, rounds: dict[str, list[dict[str, float]]], ours: str, baseline: str, key: str,
               unit: str, higher_is_better: bool, note: str = "") -> dict[str, Any]:
        """Ours against the baseline on `key`, as the per-round ratio (ours/baseline when
        higher is better, baseline/ours when lower is: either way > 1 means ours is ahead)."""
        a = [r[key] for r in rounds[ours]]
        b = [r[key] for r in rounds[baseline]]
        ratios = [x / y if higher_is_better else y / x for x, y in zip(a, b, strict=True)]
        fig = {"figure": label, "ours": ours, "baseline": baseline, "key": key, "unit": unit,
               "higher_is_better": higher_is_better, "ours_value": spread(a), "baseline_value": spread(b),
               "ratio": spread(ratios), "note": note}
        self.figures.append(fig)
        return fig

    def check(self, label: str, difference: float, tolerance: float) -> None:
        """Ours against a peer's answer: exit non-zero when they differ by more than the stated
        tolerance (or the difference is not a number), so a bench never reports the speed of a
        wrong answer. Every check is kept in the results file beside the figures."""
        difference, tolerance = float(difference), float(tolerance)
        ok = bool(difference <= tolerance)  # False for NaN too
        self.checks.append({"check": label, "difference": difference, "tolerance": tolerance, "ok": ok})
        print(f"  check {label}: {difference:.3g} (tolerance {tolerance:.3g}) {'ok' if ok else 'FAILED'}")
        if not ok:
            raise SystemExit(f"{self.name}: {label} differs by {difference:.3g}, beyond the tolerance "
                             f"{tolerance:.3g}; no figures written")

    def record(self) -> dict[str, Any]:
        return {"bench": self.name, "command": self.command, "started": self.started, "machine": machine(),
                "load_before": self.load_before, "load_after": load(), "figures": self.figures,
                "checks": self.checks}

    def write(self) -> Path:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / f"{self.name}.json"
        rec = self.record()
        path.write_text(json.dumps(rec, indent=1) + "\n")
        print(f"\nmachine: {rec['machine']['cpu']}, {rec['machine']['cores']} cores; load average "
              f"{rec['load_before']} before, {rec['load_after']} after")
        for f in self.figures:
            print("  " + describe(f))
        print(f"written: {path.relative_to(RESULTS.parent.parent)}")
        return path


def fmt(x: float) -> str:
    """Three to four significant figures, millions and up as "23.2 M", small values plain."""
    a = abs(x)
    if a >= 1e6:
        return f"{x / 1e6:.3g} M"
    if a >= 1000:
        return f"{x:,.0f}"
    if a == 0 or a >= 1e-3:
        return f"{x:.4g}"
    return f"{x:.3g}"


def span(f: dict[str, Any]) -> str:
    """Our figure's median with its min–max, in its unit."""
    v = f["ours_value"]
    return f"{fmt(v['median'])} {f['unit']} ({fmt(v['min'])}–{fmt(v['max'])})"


SIZE_UNITS = {"B", "KB", "MB", "GB", "KiB", "MiB", "GiB"}  # lower is better, but not a time: "smaller than"


def relation(f: dict[str, Any], bold: bool = False) -> str:
    """The per-round ratio to the baseline: median (min–max), > 1 when ours is ahead; a time ratio
    below 1 is turned round and read "N× slower than"."""
    r = f["ratio"]
    mid, lo, hi, word = r["median"], r["min"], r["max"], "of"
    if not f["higher_is_better"]:  # times: "3× faster than", or "3× slower than" rather than "0.33× faster"
        better, worse = ("smaller than", "larger than") if f["unit"] in SIZE_UNITS else ("faster than", "slower than")
        word = better
        if mid < 1:
            mid, lo, hi, word = 1 / mid, 1 / hi, 1 / lo, worse
    median = f"**{times(mid)}×**" if bold else f"{times(mid)}×"
    rounds = "round" if r["n"] == 1 else "rounds"
    return f"{median} {word} {f['baseline']} ({times(lo)}–{times(hi)}, {r['n']} interleaved {rounds})"


def times(r: float) -> str:
    """A ratio: three significant figures, whole thousands with separators ("5,420")."""
    return f"{r:,.0f}" if abs(r) >= 1000 else f"{r:.3g}"


def describe(f: dict[str, Any]) -> str:
    note = f" — {f['note']}" if f.get("note") else ""
    return f"{f['figure']}: {span(f)}; {relation(f)}{note}"
