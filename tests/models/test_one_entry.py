"""`bathtub.models.fit` is the one entry to fitting a saved model: the service and the benchmarks
never call a kind's own fit (`saved.fit_columns`, `recurrent.fit_columns`, `alt.fit_columns`,
`fit_regression`, `degradation.build_model`), and the domain packages no longer export them, so a
caller cannot pick a kind past the registry. Each pattern is checked against the import the
service had before the registry (tools/life.py, release before d5ea5c7)."""

from __future__ import annotations

import ast
from pathlib import Path

import bathtub.degradation
import bathtub.life
import bathtub.recurrent
from tests.source import parse

ROOT = Path(__file__).resolve().parents[2]
KIND_FITS = {"fit_columns", "fit_regression", "build_model"}
# the service's imports before the registry decided the kind
OLD_IMPORTS = ("from bathtub.regression.records import fit_regression",
               "from bathtub.life import names, records, saved\nsaved.fit_columns(columns, mapping, dist, options)")


def _kind_fits(source: str) -> list[int]:
    """Lines that import or call a kind's own fit by name."""
    out = []
    for node in ast.walk(parse(source)):
        if isinstance(node, ast.ImportFrom) and any(a.name in KIND_FITS for a in node.names):
            out.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr in KIND_FITS:
            out.append(node.lineno)
    return out


def test_the_pattern_matches_what_the_service_did():
    assert all(_kind_fits(src) for src in OLD_IMPORTS)
    assert not _kind_fits("from bathtub import models\nmodels.fit(None, columns, kind='demand')")


def test_service_and_bench_fit_only_through_models():
    found = [f"{p.relative_to(ROOT)}:{line}" for top in ("api", "bench") for p in (ROOT / top).rglob("*.py")
             for line in _kind_fits(p.read_text(encoding="utf-8"))]
    assert found == []


def test_domain_packages_do_not_export_a_kind_fit():
    for pkg in (bathtub.life, bathtub.recurrent, bathtub.degradation):
        assert not KIND_FITS & set(pkg.__all__), pkg.__name__
        assert not any(hasattr(pkg, name) for name in KIND_FITS), pkg.__name__
