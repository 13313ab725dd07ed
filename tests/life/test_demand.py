"""Demand data: PFD intervals against scipy, tests across batches against scipy and published examples."""

from __future__ import annotations

import math

import numpy as np
import orjson
import pytest
from scipy import stats

from bathtub.errors import InputError
from bathtub.life.demand import (
    DemandBatch,
    analyse_demands,
    clopper_pearson,
    cochran_armitage,
    homogeneity_test,
    jeffreys,
    parse_batches,
)

CASES = [(0, 1), (0, 50), (1, 1), (1, 20), (3, 120), (7, 7), (12, 40), (250, 10_000)]


@pytest.mark.parametrize(("f", "d"), CASES)
@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
def test_exact_interval_matches_scipy_binomtest(f, d, confidence):
    ref = stats.binomtest(f, d).proportion_ci(confidence_level=confidence, method="exact")
    lower, upper = clopper_pearson(f, d, confidence)
    # scipy root-finds on the binomial tail (to ~1e-11); we take the beta quantile, the closed form.
    assert lower == pytest.approx(ref.low, rel=1e-9, abs=1e-15)
    assert upper == pytest.approx(ref.high, rel=1e-9, abs=1e-15)
    # The defining equations, to 1e-10: P(X >= f | lower) = alpha/2 and P(X <= f | upper) = alpha/2.
    tail = (1 - confidence) / 2
    if f > 0:
        assert stats.binom.sf(f - 1, d, lower) == pytest.approx(tail, rel=1e-10)
    if f < d:
        assert stats.binom.cdf(f, d, upper) == pytest.approx(tail, rel=1e-10)


@pytest.mark.parametrize(("f", "d"), CASES)
def test_jeffreys_interval_is_the_beta_posterior_quantiles(f, d):
    lower, upper = jeffreys(f, d, 0.9)
    assert lower == pytest.approx(stats.beta.ppf(0.05, f + 0.5, d - f + 0.5), rel=1e-12, abs=1e-300)
    assert upper == pytest.approx(stats.beta.ppf(0.95, f + 0.5, d - f + 0.5), rel=1e-12)
    # The equal tails hold: 5% of the posterior lies below the lower end and 5% above the upper.
    assert stats.beta.cdf(lower, f + 0.5, d - f + 0.5) == pytest.approx(0.05, rel=1e-9)
    assert stats.beta.sf(upper, f + 0.5, d - f + 0.5) == pytest.approx(0.05, rel=1e-9)


def test_zero_failures_exact_upper_is_the_closed_form():
    # f = 0: the Clopper–Pearson upper end solves (1 - p)^d = alpha/2.
    lower, upper = clopper_pearson(0, 30, 0.95)
    assert lower == 0.0
    assert upper == pytest.approx(1.0 - 0.025 ** (1 / 30), rel=1e-12)


def test_homogeneity_matches_chi2_contingency():
    f = np.array([3, 9, 4, 12])
    d = np.array([100, 120, 90, 110])
    result = homogeneity_test(f, d)
    ref = stats.chi2_contingency(np.column_stack([f, d - f]), correction=False)
    assert result.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert result.df == ref.dof == 3


def test_cochran_armitage_two_batches_equals_pearson_chi_squared():
    # With two batches the trend statistic z^2 is the 2x2 Pearson chi-squared (no Yates).
    f, d = [4, 15], [200, 210]
    result = cochran_armitage(f, d)
    ref = stats.chi2_contingency(np.column_stack([f, np.subtract(d, f)]), correction=False)
    assert result.to_dict()["chi_squared"] == pytest.approx(ref.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(ref.pvalue, rel=1e-10)


def test_cochran_armitage_published_malformation_example():
    # Graubard & Korn (1988) maternal alcohol and malformation, as StatXact Example 6 tabulates:
    # asymptotic p two-sided (one-sided) .0078 (.0039) with scores 0, .5, 1.5, 4, 8 and
    # .1765 (.0882) with equally spaced scores.
    present = [48, 38, 5, 1, 1]
    total = [17114, 14502, 793, 127, 38]
    drinks = cochran_armitage(present, total, scores=[0, 0.5, 1.5, 4, 8])
    assert round(drinks.p_value, 4) == 0.0078
    assert round(drinks.to_dict()["p_increasing"], 4) == 0.0039
    spaced = cochran_armitage(present, total)
    # StatXact prints .1765, yet twice its own one-sided .0882 is .1764: we give 0.17639.
    assert spaced.p_value == pytest.approx(0.1765, abs=2e-4)
    assert round(spaced.to_dict()["p_increasing"], 4) == 0.0882
    # Agresti (Categorical Data Analysis, alcohol example) scores 0, .5, 1.5, 4, 7: z^2 = 6.57.
    agresti = cochran_armitage(present, total, scores=[0, 0.5, 1.5, 4, 7])
    assert round(agresti.to_dict()["chi_squared"], 2) == 6.57


def test_cochran_armitage_sas_pain_example_by_hand():
    # SAS PROC FREQ Example "Cochran-Armitage Trend Test" (Pain data, doses 0..4): |Z| = 4.7918.
    adverse = np.array([6, 7, 9, 14, 23])
    subjects = np.array([32, 33, 32, 32, 32])
    result = cochran_armitage(adverse, subjects)
    # By hand from the definition, independently of the module's arrangement of the sums.
    p = adverse.sum() / subjects.sum()
    dose = np.arange(5)
    t = np.sum(dose * adverse) - p * np.sum(dose * subjects)
    var = p * (1 - p) * (np.sum(subjects * dose**2) - np.sum(subjects * dose) ** 2 / subjects.sum())
    assert result.statistic == pytest.approx(t / math.sqrt(var), rel=1e-12)
    assert round(result.statistic, 4) == 4.7918
    assert result.to_dict()["direction"] == "increasing" and "rising" in result.reading


def test_analysis_pools_and_reads():
    batches = [
        {"demands": 400, "failures": 2, "label": "2019"},
        {"demands": 420, "failures": 3, "label": "2020"},
        DemandBatch(demands=410, failures=2, label="2021"),
    ]
    result = analyse_demands(batches, confidence=0.9)
    pooled = result.pooled
    assert (pooled.demands, pooled.failures) == (1230, 7)
    ref = stats.binomtest(7, 1230).proportion_ci(confidence_level=0.9, method="exact")
    assert pooled.exact == pytest.approx((ref.low, ref.high), rel=1e-12)
    assert [b.label for b in result.batches] == ["2019", "2020", "2021"]
    assert result.homogeneity.p_value > 0.05 and "no evidence" in result.homogeneity.reading
    # Expected failures are ~2.3 a batch: the approximation is flagged.
    assert result.homogeneity.note is not None and "rough" in result.homogeneity.note
    record = result.to_dict()
    orjson.dumps(record)
    assert record["trend"]["df"] == 1 and record["homogeneity"]["df"] == 2


def test_tests_unavailable_without_failures_or_with_one_batch():
    none_failed = analyse_demands([{"demands": 10, "failures": 0}, {"demands": 12, "failures": 0}])
    assert not none_failed.homogeneity.available and none_failed.homogeneity.p_value is None
    assert "no failures" in none_failed.trend.reading
    assert none_failed.pooled.exact[0] == 0.0
    single = analyse_demands([{"demands": 10, "failures": 2}])
    assert not single.trend.available and "two batches" in single.trend.reading


@pytest.mark.parametrize(
    ("batches", "field", "rule"),
    [
        ([{"demands": 10, "failures": 1}, {"demands": 5, "failures": 1}, {"demands": 4, "failures": 5}],
         "batches[2].failures", "at most demands"),
        ([{"demands": 0, "failures": 0}], "batches[0].demands", "integer >= 1"),
        ([{"demands": 10, "failures": -1}], "batches[0].failures", "integer >= 0"),
        ([{"demands": 10.5, "failures": 1}], "batches[0].demands", "integer"),
        ([{"demands": True, "failures": 0}], "batches[0].demands", "integer"),
        ([{"demands": 10}], "batches[0].failures", "required"),
        ([{"demands": 10, "failures": 1, "label": "x" * 81}], "batches[0].label", "80"),
        ([{"demands": 10, "failures": 1, "fails": 2}], "batches[0].fails", "unknown"),
        ([], "batches", "at least one"),
        ({"demands": 10, "failures": 1}, "batches", "list"),
        ([7], "batches[0]", "object"),
    ],
)
def test_bad_batches_are_refused_with_the_field(batches, field, rule):
    with pytest.raises(InputError) as err:
        analyse_demands(batches)
    assert err.value.field == field and rule in err.value.rule


def test_bad_options_are_refused():
    good = [{"demands": 10, "failures": 1}, {"demands": 10, "failures": 2}]
    with pytest.raises(InputError, match="confidence"):
        analyse_demands(good, confidence=1.5)
    with pytest.raises(InputError, match="scores"):
        analyse_demands(good, scores=[1.0])
    with pytest.raises(InputError) as err:
        DemandBatch(demands=3, failures=4)
    assert err.value.field == "failures"


def test_parse_batches_accepts_whole_floats():
    (batch,) = parse_batches([{"demands": 12.0, "failures": 3.0}])
    assert batch == DemandBatch(12, 3) and isinstance(batch.demands, int)


def test_low_level_functions_check_their_input():
    with pytest.raises(InputError) as err:
        clopper_pearson(5, 3)
    assert err.value.field == "failures"
    with pytest.raises(InputError, match="confidence"):
        jeffreys(1, 3, confidence=0.0)
    with pytest.raises(InputError) as err:
        cochran_armitage([1, 5], [3, 4])
    assert err.value.field == "batches[1].failures"
    with pytest.raises(InputError) as err:
        homogeneity_test([1, 2, 3], [5, 5])
    assert err.value.field == "failures"
    with pytest.raises(InputError, match="significance"):
        homogeneity_test([1, 2], [5, 5], significance=2.0)
