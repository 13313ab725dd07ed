"""Demand data: probability of failure on demand (PFD) per batch and pooled, and whether it moves.

A `DemandBatch` is a count of demands (>= 1) and of failures among them (0..demands), with an
optional label (<= 80 characters), the spec's shared request schema.

Intervals, two-sided at `confidence`:
- exact (Clopper–Pearson): Beta(f, d-f+1) and Beta(f+1, d-f) quantiles, 0 when f = 0 and
  1 when f = d; never below the nominal coverage. Same as
  `scipy.stats.binomtest(f, d).proportion_ci(method="exact")`.
- Jeffreys: the Beta(f+1/2, d-f+1/2) posterior's equal-tailed quantiles (the Jeffreys prior
  of NUREG/CR-6823 for demand failures). Taken as plain quantiles: Brown, Cai & DasGupta's
  variant that sets the lower end to 0 at f = 0 (upper to 1 at f = d) is not applied.

Tests across batches, on the 2 x k table of failures and successes:
- homogeneity: Pearson's chi-squared with k-1 degrees of freedom, without Yates' correction
  (`scipy.stats.chi2_contingency(table, correction=False)`): do the batches share one PFD?
- trend: Cochran–Armitage over batch order (scores 0, 1, ..., k-1 unless given):
  z = sum s_i (f_i - d_i p) / sqrt(p (1-p) sum d_i (s_i - s_bar)^2), p the pooled PFD, the
  variance without the N/(N-1) factor (Armitage 1955; SAS PROC FREQ's TREND). Two-sided p
  from the normal; z > 0 means the PFD rises with order. Both tests are asymptotic: with
  expected counts below 5 they are rough, and the result says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from bathtub.errors import InputError
from bathtub.validate import check_integer, check_number

MAX_LABEL = 80


@dataclass(frozen=True)
class DemandBatch:
    """`failures` failures in `demands` demands, with an optional `label`."""

    demands: int
    failures: int
    label: str | None = None

    def __post_init__(self) -> None:
        _check_batch(self.demands, self.failures, self.label, "")
        object.__setattr__(self, "demands", int(self.demands))  # 12.0 from JSON becomes 12
        object.__setattr__(self, "failures", int(self.failures))


def _whole(value: Any, field: str, low: int) -> int:
    return check_integer(value, field, low)


def _check_batch(demands: Any, failures: Any, label: Any, prefix: str) -> None:
    dot = f"{prefix}." if prefix else ""
    d = _whole(demands, f"{dot}demands", 1)
    f = _whole(failures, f"{dot}failures", 0)
    if f > d:
        raise InputError(f"{dot}failures", f"must be at most demands ({d})")
    if label is not None:
        if not isinstance(label, str):
            raise InputError(f"{dot}label", "must be a string")
        if len(label) > MAX_LABEL:
            raise InputError(f"{dot}label", f"must be at most {MAX_LABEL} characters")


def parse_batches(batches: Any, field: str = "batches") -> list[DemandBatch]:
    """Validate a list of batches (DemandBatch or mappings with demands, failures, label).

    Refuses with `InputError` naming the item, e.g. `batches[2].failures`.
    """
    if isinstance(batches, str | bytes | Mapping) or not isinstance(batches, Sequence):
        raise InputError(field, "must be a list of demand batches")
    if len(batches) == 0:
        raise InputError(field, "needs at least one batch")
    out = []
    for i, item in enumerate(batches):
        where = f"{field}[{i}]"
        if isinstance(item, DemandBatch):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            raise InputError(where, "must be an object with demands and failures")
        unknown = set(item) - {"demands", "failures", "label"}
        if unknown:
            raise InputError(f"{where}.{sorted(unknown)[0]}", "unknown field (expected demands, failures, label)")
        for key in ("demands", "failures"):
            if key not in item:
                raise InputError(f"{where}.{key}", "is required")
        _check_batch(item["demands"], item["failures"], item.get("label"), where)
        out.append(DemandBatch(int(item["demands"]), int(item["failures"]), item.get("label")))
    return out


def _check_confidence(confidence: Any, field: str = "confidence") -> float:
    return check_number(confidence, field, 0.0, 1.0, lo_open=True, hi_open=True)


def _counts(failures: Any, demands: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-batch failures and demands as arrays, each pair checked like a DemandBatch."""
    f, d = list(np.atleast_1d(failures)), list(np.atleast_1d(demands))
    if len(f) != len(d):
        raise InputError("failures", f"must have one count per batch ({len(d)})")
    for i, (fi, di) in enumerate(zip(f, d)):
        _check_batch(di, fi, None, f"batches[{i}]")
    return np.asarray(f, dtype=float), np.asarray(d, dtype=float)


def clopper_pearson(failures: int, demands: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided interval on the PFD (Clopper & Pearson 1934)."""
    _check_batch(demands, failures, None, "")
    confidence = _check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    lower = 0.0 if failures == 0 else float(stats.beta.ppf(tail, failures, demands - failures + 1))
    upper = 1.0 if failures == demands else float(stats.beta.isf(tail, failures + 1, demands - failures))
    return lower, upper


def jeffreys(failures: int, demands: int, confidence: float = 0.95) -> tuple[float, float]:
    """Equal-tailed Beta(f + 1/2, d - f + 1/2) interval on the PFD (Jeffreys prior)."""
    _check_batch(demands, failures, None, "")
    confidence = _check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    a, b = failures + 0.5, demands - failures + 0.5
    return float(stats.beta.ppf(tail, a, b)), float(stats.beta.isf(tail, a, b))


@dataclass(frozen=True)
class PfdEstimate:
    """PFD point estimate f/d with its exact and Jeffreys intervals."""

    label: str | None
    demands: int
    failures: int
    pfd: float
    exact: tuple[float, float]
    jeffreys: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "demands": self.demands,
            "failures": self.failures,
            "pfd": self.pfd,
            "exact": list(self.exact),
            "jeffreys": list(self.jeffreys),
        }


def estimate(batch: DemandBatch, confidence: float = 0.95) -> PfdEstimate:
    """PFD of one batch with exact and Jeffreys intervals at `confidence`."""
    f, d = batch.failures, batch.demands
    return PfdEstimate(batch.label, d, f, f / d, clopper_pearson(f, d, confidence), jeffreys(f, d, confidence))


@dataclass(frozen=True)
class BatchTest:
    """One test across batches: statistic, degrees of freedom, p-value and what they mean.

    `available` is False (statistic and p null, `reading` says why) when the data cannot
    carry the test: a single batch, or no failures (or no successes) at all.
    """

    test: str
    available: bool
    statistic: float | None
    df: int | None
    p_value: float | None
    reading: str
    note: str | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = {
            "test": self.test,
            "available": self.available,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "reading": self.reading,
            "note": self.note,
        }
        out.update(dict(self.extra))
        return out


def _p_text(p: float) -> str:
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.4g}"


def _unavailable(test: str, failures: np.ndarray, demands: np.ndarray) -> BatchTest | None:
    if failures.size < 2:
        return BatchTest(test, False, None, None, None, "needs at least two batches to compare")
    if failures.sum() == 0:
        return BatchTest(test, False, None, None, None, "no failures in any batch: nothing to compare")
    if failures.sum() == demands.sum():
        return BatchTest(test, False, None, None, None, "every demand failed: nothing to compare")
    return None


def _small_counts_note(failures: np.ndarray, demands: np.ndarray) -> str | None:
    pooled = failures.sum() / demands.sum()
    expected = np.concatenate([demands * pooled, demands * (1.0 - pooled)])
    if expected.min() < 5.0:
        return (
            f"smallest expected count {expected.min():.3g} < 5: the chi-squared/normal approximation "
            "is rough here, read the p-value as indicative"
        )
    return None


def homogeneity_test(
    failures: Sequence[int] | np.ndarray, demands: Sequence[int] | np.ndarray, significance: float = 0.05
) -> BatchTest:
    """Pearson chi-squared test that all batches share one PFD (k-1 df, no Yates correction)."""
    name = "chi-squared homogeneity"
    f, d = _counts(failures, demands)
    significance = _check_confidence(significance, "significance")
    missing = _unavailable(name, f, d)
    if missing is not None:
        return missing
    pooled = f.sum() / d.sum()
    expected_f = d * pooled
    expected_s = d * (1.0 - pooled)
    statistic = float(np.sum((f - expected_f) ** 2 / expected_f + ((d - f) - expected_s) ** 2 / expected_s))
    df = f.size - 1
    p = float(stats.chi2.sf(statistic, df))
    if p < significance:
        reading = (
            f"{_p_text(p)}, below the {significance:g} level: the batches' failure probabilities differ by more than "
            "chance explains; a single pooled PFD hides that difference"
        )
    else:
        reading = (
            f"{_p_text(p)}, not below the {significance:g} level: no evidence that the batches differ; "
            "pooling them into one PFD is consistent with the data"
        )
    return BatchTest(name, True, statistic, df, p, reading, _small_counts_note(f, d))


def cochran_armitage(
    failures: Sequence[int] | np.ndarray,
    demands: Sequence[int] | np.ndarray,
    scores: Sequence[float] | np.ndarray | None = None,
    significance: float = 0.05,
) -> BatchTest:
    """Cochran–Armitage test for a linear trend of the PFD over batch order (or `scores`).

    `statistic` is z (> 0: rising); `chi_squared` = z^2 on 1 df; `p_value` two-sided,
    `p_increasing`/`p_decreasing` the one-sided ones.
    """
    name = "Cochran–Armitage trend"
    f, d = _counts(failures, demands)
    significance = _check_confidence(significance, "significance")
    missing = _unavailable(name, f, d)
    if missing is not None:
        return missing
    s = np.arange(f.size, dtype=float) if scores is None else np.asarray(scores, dtype=float)
    if s.shape != f.shape or not np.all(np.isfinite(s)):
        raise InputError("scores", f"must be {f.size} finite numbers, one per batch")
    total = d.sum()
    pooled = f.sum() / total
    s_bar = np.sum(d * s) / total
    spread = np.sum(d * (s - s_bar) ** 2)
    if spread <= 0.0:
        return BatchTest(name, False, None, None, None, "every batch has the same score: no order to trend over")
    z = float(np.sum(s * (f - d * pooled)) / math.sqrt(pooled * (1.0 - pooled) * spread))
    p = float(2.0 * stats.norm.sf(abs(z)))
    direction = "increasing" if z > 0 else "decreasing" if z < 0 else "none"
    if p < significance:
        reading = (
            f"z = {z:.3f}, {_p_text(p)}, below the {significance:g} level: the failure probability is "
            f"{'rising' if z > 0 else 'falling'} over the batch order"
        )
    else:
        reading = (
            f"z = {z:.3f}, {_p_text(p)}, not below the {significance:g} level: "
            "no evidence of a trend over the batch order"
        )
    extra = (
        ("chi_squared", z * z),
        ("direction", direction),
        ("p_increasing", float(stats.norm.sf(z))),
        ("p_decreasing", float(stats.norm.cdf(z))),
        ("scores", s.tolist()),
    )
    return BatchTest(name, True, z, 1, p, reading, _small_counts_note(f, d), extra)


@dataclass(frozen=True)
class DemandAnalysis:
    """Per-batch and pooled PFD with intervals, and the tests across batches."""

    confidence: float
    batches: tuple[PfdEstimate, ...]
    pooled: PfdEstimate
    homogeneity: BatchTest
    trend: BatchTest

    def to_dict(self) -> dict[str, Any]:
        return {
            "confidence": self.confidence,
            "batches": [b.to_dict() for b in self.batches],
            "pooled": self.pooled.to_dict(),
            "homogeneity": self.homogeneity.to_dict(),
            "trend": self.trend.to_dict(),
        }


def analyse_demands(
    batches: Any,
    *,
    confidence: float = 0.95,
    scores: Sequence[float] | None = None,
    significance: float = 0.05,
) -> DemandAnalysis:
    """PFD per batch and pooled (exact and Jeffreys intervals at `confidence`), a chi-squared
    test that the batches share one PFD and a Cochran–Armitage test for a trend over their
    order (`scores` to space batches unevenly, e.g. by calendar time).

    `batches`: DemandBatch objects or mappings {demands, failures, label?}. The pooled
    estimate assumes the batches share one PFD; the homogeneity test says whether they may.
    """
    parsed = parse_batches(batches)
    confidence = _check_confidence(confidence)
    _check_confidence(significance, "significance")
    failures = np.array([b.failures for b in parsed])
    demands = np.array([b.demands for b in parsed])
    pooled = DemandBatch(int(demands.sum()), int(failures.sum()), "pooled")
    return DemandAnalysis(
        confidence=confidence,
        batches=tuple(estimate(b, confidence) for b in parsed),
        pooled=estimate(pooled, confidence),
        homogeneity=homogeneity_test(failures, demands, significance),
        trend=cochran_armitage(failures, demands, scores, significance),
    )
