"""The inference machinery lives once, in `bathtub.inference`: no module outside it calls
scipy's `minimize(`, writes the two-sided normal quantile `norm.ppf(0.5 + ...)` again, or builds
a named parameter row with `lower`/`upper` keys instead of `ci`. Each pattern is checked against a
line of the code it replaced, so a pattern that silently stops matching fails here too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np

from bathtub.alt import fit_alt
from tests.source import parse

LIBRARY = Path(__file__).resolve().parents[2] / "python" / "bathtub"
INFERENCE = LIBRARY / "inference"

MINIMIZE = re.compile(r"\bminimize\(")
QUANTILE = re.compile(r"(norm\.ppf|ndtri)\(0\.5 \+")
# lines the core replaced (recurrent/covariates.py, regression/models.py, degradation/random_effects.py)
OLD_MINIMIZE = '    res = optimize.minimize(profile, x0, method="BFGS", options={"gtol": 1e-10})'
OLD_MINIMIZE_BARE = '        res = minimize(f, start, method="BFGS", options={"gtol": 1e-7, "maxiter": 400})'
OLD_QUANTILES = ("    zq = float(stats.norm.ppf(0.5 + confidence / 2))", "    zq = float(ndtri(0.5 + confidence / 2))")
# alt/model.py's reported rows before the core: {"name": ..., "value", "se", "lower", "upper"}
OLD_ROW = 'out.append({"name": c.name, "value": v, "se": se, "lower": lo, "upper": hi})'


def _library_files() -> list[Path]:
    return [p for p in LIBRARY.rglob("*.py") if INFERENCE not in p.parents]


def _hits(pattern: re.Pattern[str]) -> list[str]:
    return [f"{p.relative_to(LIBRARY)}:{i}" for p in _library_files()
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(line) and not line.lstrip().startswith("#")]


def _lower_upper_rows(source: str) -> list[int]:
    """Lines of dict literals with a `name` key and a `lower` or `upper` key (a parameter row)."""
    out = []
    for node in ast.walk(parse(source)):
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if "name" in keys and keys & {"lower", "upper"}:
                out.append(node.lineno)
    return out


def test_the_patterns_match_the_code_they_replaced():
    assert MINIMIZE.search(OLD_MINIMIZE) and MINIMIZE.search(OLD_MINIMIZE_BARE)
    assert not MINIMIZE.search("optimize.minimize_scalar(rate, bounds=(lo, hi))")  # a 1-D search, not a fit
    assert all(QUANTILE.search(line) for line in OLD_QUANTILES)
    assert _lower_upper_rows(OLD_ROW.strip()) == [1]


def test_no_optimiser_outside_inference():
    assert _hits(MINIMIZE) == []


def test_no_normal_quantile_outside_inference():
    assert _hits(QUANTILE) == []


def test_no_parameter_row_with_lower_upper_keys():
    found = [f"{p.relative_to(LIBRARY)}:{line}" for p in _library_files()
             for line in _lower_upper_rows(p.read_text(encoding="utf-8"))]
    assert found == []


def test_alt_params_rows_are_name_value_se_ci():
    rng = np.random.default_rng(5)
    s = np.repeat([350.0, 380.0, 410.0], 10)
    t = np.exp(-8.0 + 6000.0 / s) * rng.weibull(2.0, s.size)
    rec = fit_alt("weibull_arrhenius", t, t < 4000, s)
    for p in rec["params"]:
        assert set(p) == {"name", "value", "se", "ci"}, p
        assert p["ci"][0] < p["value"] < p["ci"][1]
    assert set(rec["activation_energy_ev"]) == {"value", "se", "ci"}
