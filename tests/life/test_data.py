"""LifeData: censoring codes, mapping, interval rules and refusals (item 1 of issue 5)."""

import math

import numpy as np
import pytest

from bathtub.errors import InputError
from bathtub.life import LifeData, fit


def test_codes_and_spellings_agree():
    x = [5, 6, 7, 8, 9, 10]
    a = LifeData.from_arrays(x, [0, 1, -1, 0, 1, -1])
    b = LifeData.from_arrays(x, ["F", "S", "L", "failed", "suspension", "left"])
    c = LifeData.from_arrays(x, ["failure", "C", "l", "f", "right", "L"])
    for d in (a, b, c):
        assert d.f.tolist() == [5, 8] and d.r.tolist() == [6, 9] and d.lt.tolist() == [7, 10]
        assert d.n == 6 and d.n_failures == 4


def test_counts_collapse_duplicates():
    d = LifeData.from_arrays([3, 3, 4, 3], [0, 0, 1, 1], n=[2, 1, 5, 4])
    assert d.f.tolist() == [3] and d.fn.tolist() == [3]
    assert d.r.tolist() == [3, 4] and d.rn.tolist() == [4, 5]
    assert d.n == 12


def test_interval_columns_rules():
    # xl == xr exact; xl 0 or missing left-censored; missing/inf xr right-censored
    d = LifeData.from_arrays(xl=[2, 0, None, 4, 1], xr=[2, 5, 6, None, math.inf])
    assert d.f.tolist() == [2] and d.lt.tolist() == [5, 6] and d.r.tolist() == [1, 4]
    d = LifeData.from_arrays(xl=[1, 2], xr=[3, 4])
    assert d.il.tolist() == [1, 2] and d.ir.tolist() == [3, 4]


def test_from_columns_mapping():
    cols = {"hours": [10, 20, 30], "state": ["F", "S", "F"], "qty": [1, 2, 1]}
    d = LifeData.from_columns(cols, {"x": "hours", "c": "state", "n": "qty"})
    assert d.f.tolist() == [10, 30] and d.rn.tolist() == [2]
    with pytest.raises(InputError) as e:
        LifeData.from_columns(cols, {"x": "hrs"})
    assert e.value.field == "mapping.x" and "not in the dataset" in e.value.rule


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"x": [1, -2, 3]}, "x"),
        ({"x": [1, math.nan, 3]}, "x"),
        ({"x": [1, math.inf, 3]}, "x"),
        ({"x": [1, 2, 3], "c": [0, 2, 1]}, "c"),
        ({"x": [1, 2, 3], "c": ["F", "maybe", "S"]}, "c"),
        ({"x": [1, 2, 3], "c": [True, False, True]}, "c"),
        ({"x": [1, 2], "c": [0, 1, 1]}, "c"),
        ({"x": [1, 2], "n": [1, 0.5]}, "n"),
        ({"xl": [3, 1], "xr": [2, 2]}, "xr"),
        ({"x": ["a", 2]}, "x"),
    ],
)
def test_bad_data_refused(kwargs, field):
    with pytest.raises(InputError) as e:
        LifeData.from_arrays(**kwargs)
    assert e.value.field == field


def test_no_failures_and_too_few_failures_refused():
    d = LifeData.from_arrays([1, 2, 3], [1, 1, 1])
    with pytest.raises(InputError, match="no failures"):
        fit(d, "weibull")
    d = LifeData.from_arrays([1, 2, 3], [0, 0, 1])
    with pytest.raises(InputError, match="2 failures but"):
        fit(d, "expo_weibull")


def test_unknown_distribution_and_options_refused():
    d = LifeData.from_arrays([1.0, 2.0, 3.0])
    with pytest.raises(InputError) as e:
        fit(d, "weibul")
    assert e.value.field == "distribution"
    with pytest.raises(InputError) as e:
        fit(d, "weibull", options={"ofset": True})
    assert e.value.field == "options.ofset"
    with pytest.raises(InputError):
        fit(d, "normal", options={"offset": True})
    with pytest.raises(InputError):
        fit(d, "weibull", method="mom")


def test_domain_refusals():
    with pytest.raises(InputError, match="beta"):
        fit(LifeData.from_arrays([0.2, 0.5, 1.5]), "beta")
    with pytest.raises(InputError, match="whole numbers"):
        fit(LifeData.from_arrays([1.5, 2, 3]), "discrete_weibull")
    with pytest.raises(InputError, match="use option zi"):
        fit(LifeData.from_arrays([0.0, 2, 3, 4]), "weibull")
    with pytest.raises(InputError, match="zero inflation"):
        fit(LifeData.from_arrays([1.0, 2, 3, 4]), "weibull", options={"zi": True})


def test_large_numeric_arrays_take_the_fast_path():
    x = np.arange(1, 100_001, dtype=float)
    d = LifeData.from_arrays(x, np.zeros(x.size, int))
    assert d.n == 100_000 and d.f.size == 100_000


def test_spelled_codes_on_many_rows_and_numeric_strings():
    c = np.array(["F", "S", " failed ", "0", "1.0", "-1"] * 1000)
    d = LifeData.from_arrays(np.arange(1, 6001, dtype=float), c)
    assert d.n_failures == 4000 and d.rn.sum() == 2000 and d.ln.sum() == 1000
    with pytest.raises(InputError) as e:
        LifeData.from_arrays([1.0, 2.0, 3.0], ["F", "S", "2"])
    assert "row 2" in e.value.rule


def test_all_failures_at_one_time_refused():
    with pytest.raises(InputError, match="one time"):
        fit(LifeData.from_arrays([5.0, 5.0, 5.0, 9.0], [0, 0, 0, 1]), "weibull")


def test_row_rules_name_the_column_and_row_and_leave_whole_data_rules_to_the_fit():
    from bathtub.errors import RowError
    from bathtub.life.data import check_rows
    from bathtub.life.saved import check_model_rows

    cols = {"t": [5.0, 6.0, -1.0], "state": ["F", "S", "F"], "k": [1, 2, 1], "lo": [0, 1, 2], "hi": [1, None, 1]}
    cases = [
        ({"x": "t"}, "t", 2, ">= 0"),
        ({"x": "k", "c": "state", "n": "t"}, "t", 2, "whole numbers"),
        ({"xl": "lo", "xr": "hi"}, "hi", 2, "xr must be >= xl"),
    ]
    for mapping, column, row, rule in cases:
        with pytest.raises(RowError) as err:
            check_rows(cols, mapping)
        assert (err.value.field, err.value.row) == (column, row) and rule in err.value.row_rule
    for codes, rule in ((["F", "Z"], "unknown censoring code"), (["F", None], "missing value")):
        with pytest.raises(RowError) as err:
            check_rows({"t": [1.0, 2.0], "c": codes}, {"x": "t", "c": "c"})
        assert (err.value.field, err.value.row) == ("c", 1) and rule in err.value.row_rule
    # One suspended row alone is fine row by row (a fit of it alone would refuse: no failures).
    check_rows({"t": [3.0], "c": ["S"]}, {"x": "t", "c": "c"})
    with pytest.raises(InputError, match="no failures"):
        fit(LifeData.from_arrays([3.0], ["S"]), "weibull")
    # A competing-risks mapping also needs a mode on each failure, not on suspensions.
    check_model_rows({"t": [1.0, 2.0], "c": ["S", "F"], "m": [None, "wear"]}, {"x": "t", "c": "c", "mode": "m"})
    with pytest.raises(RowError) as err:
        check_model_rows({"t": [1.0, 2.0], "c": ["F", "F"], "m": ["wear", ""]}, {"x": "t", "c": "c", "mode": "m"})
    assert (err.value.field, err.value.row) == ("m", 1)
    # Crossing to a worker process keeps the row.
    import pickle

    again = pickle.loads(pickle.dumps(RowError("t", 4, "times must be >= 0")))
    assert (again.field, again.row, again.row_rule, str(again)) == ("t", 4, "times must be >= 0",
                                                                      "t: row 4: times must be >= 0")
