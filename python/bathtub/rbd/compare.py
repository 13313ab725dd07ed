"""Two analysis runs side by side: did the figures change beyond Monte Carlo noise, did the
inputs differ, and which ran faster.

A run record is the plain dict an analysis gives (`bathtub.rbd.analyze`'s answer, or a stored
`rbd_run`): `results` (its figures), and where present `method`, `inputs`, `engine_version`
and `duration_s`. The runs are taken as independent (two seeds, or two engines whose random
draws differ), so a difference's variance is the sum of the two runs' own.

Per figure, in `results`:
- a figure with a `<name>_std_error` beside it (or `{mean, std_error}`) is compared on those
  standard errors: z = (b - a) / sqrt(se_a² + se_b²);
- a proportion of the replications (`reliability`, `probability_of_failure`,
  `probability_below_demand`, a phase's `reliability`) by the two-proportion z-test with the
  pooled proportion, n = each run's `replications`;
- a closed-form (exact) figure has no noise: its standard error is 0;
- any other figure (a ratio of two means such as MTBF, a per-block average, a share) carries
  no standard error in the record: it is listed `not_comparable` with the reason, its
  difference shown, and no verdict is made up.

The verdicts control the family-wise error over the figures compared (Holm's step-down
correction of the two-sided normal p-values, at 1 - `confidence`): with probability at least
`confidence`, two runs that estimate the same quantities have no figure called `changed`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bathtub.errors import InputError
from bathtub.validate import check_number

__all__ = ["CORRECTION", "compare_runs", "holm", "input_differences", "run_kind"]

CORRECTION = "holm"
# Fractions of the run's replications: binomial, so their noise follows from p and n.
PROPORTIONS = frozenset({"reliability", "probability_of_failure", "probability_below_demand"})
# A figure whose standard error is another key's (the complement of an estimated one).
SE_FROM = {"availability": "unavailability_std_error"}
# What a run record holds beside its figures: settings, counts of work done, labels.
NOT_FIGURES = frozenset({
    "events", "replications", "replication_start", "seed", "horizon", "mission_time", "engine_version",
    "relative_half_width", "target_half_width", "target_reached", "cycles", "cycles_reaching_failure", "bias",
    "crews", "method", "exact", "note", "id", "name", "end", "read_at", "demand", "period", "target_sil",
    "target_met", "sil", "sil_claimed", "pfd", "unit",
})
# Options that change how long or how a run is made, not what it estimates.
RUN_SETTINGS = frozenset({"seed", "replications", "precision", "max_replications", "grid", "method"})
MAX_LISTED = 50
KINDS = {"mean_availability": "availability", "unavailability": "steady_state", "probability_of_failure": "mission"}
KIND_WORDS = {"availability": "availability over a horizon (repairable simulation)",
              "steady_state": "steady-state unavailability (failure biasing)",
              "mission": "mission reliability (non-repairable)"}


@dataclass(frozen=True)
class _Figure:
    path: str
    a: float | None
    b: float | None
    se: float | None  # None: no standard error, so no verdict
    basis: str
    reason: str | None = None


def run_kind(results: Mapping[str, Any]) -> str:
    """availability | steady_state | mission, read from the figures a run's results hold."""
    for key, kind in KINDS.items():
        if key in results:
            return kind
    raise ValueError("no availability, unavailability or mission figure")


def _numeric(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _number(x: Any) -> float | None:
    """A finite number as float, else None (JSON's null stands for an infinite or missing one)."""
    return float(x) if _numeric(x) and math.isfinite(x) else None


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    """A list of objects named by `id` or `name` as a mapping (per-block, per-phase figures)."""
    if not items or not all(isinstance(i, Mapping) for i in items):
        return None
    for key in ("id", "name"):
        if all(key in i for i in items):
            return {str(i[key]): i for i in items}
    return None


def _leaves(node: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Mapping[str, Any], str, Any]]:
    """(path, the dict holding it, key, value) for every figure-like entry of a results tree."""
    for key, value in node.items():
        if key in NOT_FIGURES or key.endswith(("_std_error", "_interval", "_lower", "_upper")):
            continue
        where = f"{path}{key}"
        if isinstance(value, Mapping):
            if "mean" in value and "std_error" in value:
                yield where, value, "mean", value["mean"]
            else:
                yield from _leaves(value, where + ".")
        elif isinstance(value, list):
            keyed = _keyed(value)
            if keyed is not None:
                yield from _leaves(keyed, where + ".")
        else:
            yield where, node, key, value


def _figures(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[_Figure]:
    ra, rb = a["results"], b["results"]
    exact_a, exact_b = bool(ra.get("exact")), bool(rb.get("exact"))
    na, nb = _number(ra.get("replications")), _number(rb.get("replications"))
    left = {p: (holder, key, v) for p, holder, key, v in _leaves(ra)}
    right = {p: (holder, key, v) for p, holder, key, v in _leaves(rb)}
    out = []
    for path in [*left, *(p for p in right if p not in left)]:
        values = [side[path][2] for side in (left, right) if path in side]
        if not any(v is None or _numeric(v) for v in values):
            continue  # text, flags: not figures
        if path not in left or path not in right:
            out.append(_Figure(path, _number(left[path][2]) if path in left else None,
                               _number(right[path][2]) if path in right else None, None, "none",
                               f"only in run {'a' if path in left else 'b'}"))
            continue
        (ha, key, va), (hb, _, vb) = left[path], right[path]
        x, y = _number(va), _number(vb)
        if x is None or y is None:
            out.append(_Figure(path, x, y, None, "none", "no finite value in both runs (e.g. an infinite MTTF)"))
            continue
        sa, sb = _side_se(ha, key, x, exact_a, na), _side_se(hb, key, y, exact_b, nb)
        if key in PROPORTIONS and not (exact_a and exact_b) and sa is not None and sb is not None:
            out.append(_Figure(path, x, y, _proportion_se(x, y, na, nb, exact_a, exact_b), "binomial proportions"))
        elif sa is None or sb is None:
            out.append(_Figure(path, x, y, None, "none", _why_not(path, key)))
        else:
            basis = "exact" if exact_a and exact_b else "standard errors"
            out.append(_Figure(path, x, y, math.hypot(sa, sb), basis))
    return out


def _side_se(holder: Mapping[str, Any], key: str, value: float, exact: bool, n: float | None) -> float | None:
    """One run's standard error of a figure, or None when its record carries none."""
    if exact:
        return 0.0
    if key == "mean" and "std_error" in holder:
        return _number(holder["std_error"])
    se_key = SE_FROM.get(key, f"{key}_std_error")
    if se_key in holder:
        return _number(holder[se_key])
    if key in PROPORTIONS and n:
        return math.sqrt(max(value * (1.0 - value), 0.0) / n)
    return None


def _proportion_se(x: float, y: float, na: float | None, nb: float | None, exact_a: bool, exact_b: bool) -> float:
    """Under "no change" both runs estimate one p: pooled when both simulate, the exact one's
    value when one side is a closed form (then only the simulated side is noisy)."""
    if exact_a and nb:
        return math.sqrt(max(x * (1.0 - x), 0.0) / nb)
    if exact_b and na:
        return math.sqrt(max(y * (1.0 - y), 0.0) / na)
    assert na and nb
    p = (x * na + y * nb) / (na + nb)
    return math.sqrt(max(p * (1.0 - p), 0.0) * (1.0 / na + 1.0 / nb))


def _why_not(path: str, key: str) -> str:
    if key in ("mtbf", "mttr", "mean_down_time", "mttf"):
        return "a ratio of two of the run's means; the run records no standard error for it"
    if path.startswith("blocks.") or path.startswith("block_shares.") or ".by_block." in f".{path}":
        return "a per-block average or share; the run records no standard error for it"
    return "the run records no standard error for it"


def _p_value(a: float, b: float, se: float) -> tuple[float | None, float]:
    """(z, two-sided normal p) of b - a. No noise (exact figures, or proportions both 0 or 1):
    equal to rounding is p = 1, else 0."""
    if se > 0.0:
        z = (b - a) / se
        return z, math.erfc(abs(z) / math.sqrt(2.0))
    return None, 1.0 if abs(b - a) <= 1e-12 * max(1.0, abs(a), abs(b)) else 0.0


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input's order: reject where adjusted <= alpha
    and the family-wise error rate is at most alpha, whatever the dependence between them."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _diff_paths(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in [*a, *(k for k in b if k not in a)]:
            _diff_paths(a.get(key), b.get(key), f"{path}.{key}" if path else str(key), out)
    elif isinstance(a, list) and isinstance(b, list):
        ka, kb = _keyed(a), _keyed(b)
        if ka is not None and kb is not None:
            _diff_paths(ka, kb, path, out)
        elif len(a) != len(b):
            out.append(path)
        else:
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                _diff_paths(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(path)


def input_differences(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> list[str]:
    """Paths (`diagram.nodes.p1.repair.params`, `options.seed`) where two runs' inputs differ;
    lists of nodes are matched by id."""
    out: list[str] = []
    _diff_paths(a or {}, b or {}, "", out)
    return out


def _inputs_note(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    if "inputs" not in a or "inputs" not in b:
        return {"recorded": False, "differ": [], "settings_only": None,
                "note": "a run does not record its inputs: whether they differ is not known"}
    differ = input_differences(a["inputs"], b["inputs"])
    settings_only = all(p.startswith("options.") and p.split(".")[1] in RUN_SETTINGS for p in differ)
    if not differ:
        note = "same inputs"
    elif settings_only:
        note = "same diagram and figures asked for; the runs differ only in run settings (" + ", ".join(differ) + ")"
    else:
        shown = differ[:MAX_LISTED]
        note = ("the inputs differ (" + ", ".join(shown) + (", ..." if len(differ) > MAX_LISTED else "")
                + "): a `changed` figure may come from these inputs, not from the engine")
    return {"recorded": True, "differ": differ[:MAX_LISTED], "settings_only": settings_only, "note": note}


def _seed(run: Mapping[str, Any]) -> Any:
    return run.get("results", {}).get("seed", run.get("inputs", {}).get("options", {}).get("seed"))


def _speed(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Events per wall-second of each run and b's over a's; wall time is what a run record holds
    (the service times each run on whatever threads and load it had), so read one pair as a hint
    and time versions with the bench suite (bench/versions)."""
    out: dict[str, Any] = {"basis": "events per wall-second of each run (duration_s)"}
    rates = []
    for side, run in (("a", a), ("b", b)):
        events, seconds = _number(run["results"].get("events")), _number(run.get("duration_s"))
        rate = events / seconds if events is not None and seconds else None
        out[side] = {"events": events, "duration_s": seconds, "events_per_second": rate}
        rates.append(rate)
    out["ratio"] = rates[1] / rates[0] if rates[0] and rates[1] else None
    if out["ratio"] is None:
        out["note"] = "a run records no events or no duration (a closed form, or a library run without duration_s)"
    return out


def _check_run(run: Any, name: str, field: str) -> str:
    if not isinstance(run, Mapping) or not isinstance(run.get("results"), Mapping):
        raise InputError(field, f"run {name} must be a run record with `results`")
    try:
        return run_kind(run["results"])
    except ValueError:
        raise InputError(field, f"run {name} holds no availability, unavailability or mission figure") from None


def compare_runs(a: Mapping[str, Any], b: Mapping[str, Any], *, confidence: float = 0.95,
                 field: str = "runs") -> dict[str, Any]:
    """Run b against run a, figure by figure (differences are b - a).

    Returns {verdict: same | changed, kind, confidence, correction, family_wise_error,
    compared, family_size (figures in Holm's family: those with noise or a difference),
    changed, not_comparable, figures: [{figure, a, b, difference, std_error, z,
    p_value, adjusted_p_value, verdict, basis, reason?}], inputs: {recorded, differ,
    settings_only, note}, engines: {a, b}, speed, notes}. A figure's verdict is `changed`
    where its Holm-adjusted p-value is at most 1 - confidence, `same` otherwise, and
    `not_comparable` (with `reason`) where a run records no standard error for it.
    Refused (InputError on `field`): not run records, or runs of different kinds
    (availability over a horizon, steady state, mission)."""
    confidence = check_number(confidence, "confidence", 0.5, 1.0, hi_open=True)
    kind_a, kind_b = _check_run(a, "a", field), _check_run(b, "b", field)
    if kind_a != kind_b:
        raise InputError(field, f"runs of different kinds cannot be compared: a is {KIND_WORDS[kind_a]}, "
                                f"b is {KIND_WORDS[kind_b]}")
    alpha = 1.0 - float(confidence)
    figures = _figures(a, b)
    tests = {f.path: _p_value(f.a, f.b, f.se) for f in figures
             if f.se is not None and f.a is not None and f.b is not None}
    tested = [f for f in figures if f.path in tests]
    # A figure with no noise that agrees (a cost kind neither run incurred, an exact figure) cannot
    # be a false alarm: left out of the family, so it does not dilute the others' tests.
    family = [f for f in tested if not (f.se == 0.0 and tests[f.path][1] == 1.0)]
    adjusted = {f.path: 1.0 for f in tested}
    adjusted |= dict(zip((f.path for f in family), holm([tests[f.path][1] for f in family]), strict=True))
    rows = []
    for f in figures:
        diff = None if f.a is None or f.b is None else f.b - f.a
        row: dict[str, Any] = {"figure": f.path, "a": f.a, "b": f.b, "difference": diff, "std_error": f.se,
                               "basis": f.basis}
        if f.path in tests:
            z, p = tests[f.path]
            row |= {"z": z, "p_value": p, "adjusted_p_value": adjusted[f.path],
                    "verdict": "changed" if adjusted[f.path] <= alpha else "same"}
        else:
            row |= {"z": None, "p_value": None, "adjusted_p_value": None, "verdict": "not_comparable",
                    "reason": f.reason}
        rows.append(row)
    changed = sum(r["verdict"] == "changed" for r in rows)
    notes = [f"Holm's correction over the {len(family)} figures with noise or a difference: with probability at least "
             f"{confidence:g}, runs that estimate the same quantities have no figure called changed"]
    simulated = not (a["results"].get("exact") or b["results"].get("exact"))  # a closed form draws nothing
    if simulated and _seed(a) is not None and _seed(a) == _seed(b):
        notes.append("both runs used the same seed: they share random numbers, so the independent-runs standard "
                     "error overstates the noise of the difference; `changed` still holds, `same` is weaker evidence")
    return {
        "verdict": "changed" if changed else "same",
        "kind": kind_a,
        "confidence": float(confidence),
        "correction": CORRECTION,
        "family_wise_error": alpha,
        "compared": len(tested),
        "family_size": len(family),
        "changed": changed,
        "not_comparable": len(rows) - len(tested),
        "figures": rows,
        "inputs": _inputs_note(a, b),
        "engines": {"a": a.get("engine_version"), "b": b.get("engine_version")},
        "speed": _speed(a, b),
        "notes": notes,
    }
