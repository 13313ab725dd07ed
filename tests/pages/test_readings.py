"""The page's reading helpers, without a browser: one interval reader for both row shapes, and log
axes labelled in one style (the Weibull paper once read "1000" beside "2×10²" and "3×10⁴×10²")."""

from __future__ import annotations

from matplotlib.figure import Figure

from bathtub_api.pages.plots import decade_label, log_axis
from bathtub_api.pages.readings import interval, label, lower_bound, mean_of


def test_interval_reads_ci_and_the_older_lower_upper_alike() -> None:
    new = {"name": "A", "value": 157.6, "se": 85.9, "ci": [54.1, 458.8]}
    old = {"name": "A", "value": 157.6, "se": 85.9, "lower": 54.1, "upper": 458.8}
    assert interval(new) == interval(old) == (54.1, 458.8)
    assert interval({"median": 124.8, "interval": [9.1, 568.2]}) == (9.1, 568.2)
    assert interval({"value": 1.0}) is None and interval({"ci": [None, 2.0]}) is None and interval("weibull") is None
    assert lower_bound({"value": 25.0, "lower": 10.9}) == 10.9 and lower_bound(new) == 54.1


def test_labels_and_a_repair_models_mean() -> None:
    assert label("exact_exponential") == "exact (constant failure rate)" and label("rtf") == "run to failure"
    assert label("non_operational") == "non-operational" and label("some_new_id") == "some new id"
    # an exponential repair at rate 0.05 per hour: MTTR 1/0.05 = 20 hours
    assert mean_of({"distribution_id": "exponential", "params": [{"name": "failure_rate", "value": 0.05}]}) == 20.0
    assert mean_of({"saved_model_id": "mdl_x"}) is None


def test_decade_labels_are_one_style() -> None:
    assert [decade_label(x) for x in (0.01, 1.0, 200.0, 1000.0, 1e4, 3e4, 1e6)] == \
        ["0.01", "1", "200", "1000", "10⁴", "3×10⁴", "10⁶"]


def test_log_axis_ticks_never_crowd() -> None:
    for lo, hi, want in ((1.7, 850.0, [3.0, 10.0, 30.0, 100.0, 300.0]), (0.3, 2.8, [0.5, 1.0, 2.0]),
                         (1.0, 1e9, [1.0, 100.0, 1e4, 1e6, 1e8])):
        ax = Figure().add_subplot()
        log_axis(ax.xaxis, lo, hi)
        ticks = list(ax.xaxis.get_majorticklocs())
        assert ticks == want, (lo, hi, ticks)
        assert all(t.get_text() == "" for t in ax.xaxis.get_minorticklabels())
