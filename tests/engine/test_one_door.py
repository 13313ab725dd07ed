"""The engine's Python face has one door and one set of declarations (issue 33):
`bathtub.engine.binding` is the library's only importer of the compiled engine, a diagram
sub-object is refused by a run in the same words as by the stored diagram (one declaration
drives both), and the library's primitive checks all go through `bathtub.validate`."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bathtub.engine import normalize_diagram
from bathtub.errors import InputError
from bathtub.rbd import schema as s
from bathtub.validate import check_integer, check_number, is_integer, is_number
from tests.source import parse

from .engine_diagrams import block, exp_model, series

LIBRARY = Path(__file__).resolve().parents[2] / "python" / "bathtub"


def _imports_engine(path: Path) -> bool:
    for node in ast.walk(parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module == "bathtub" and any(
                a.name == "_engine" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "bathtub._engine":
            return True
        if isinstance(node, ast.Import) and any(a.name == "bathtub._engine" for a in node.names):
            return True
    return False


def test_only_the_binding_imports_the_compiled_engine() -> None:
    importers = sorted(str(p.relative_to(LIBRARY)) for p in LIBRARY.rglob("*.py") if _imports_engine(p))
    # __init__ reads the version string alone, so `import bathtub` stays light
    assert importers == ["__init__.py", "engine/binding.py"]


def test_no_inline_number_checks_outside_the_toolkit() -> None:
    inline = re.compile(r"isinstance\([^)]*bool\) or not isinstance")
    found = [f"{p.relative_to(LIBRARY)}:{i}" for p in LIBRARY.rglob("*.py")
             for i, line in enumerate(p.read_text().splitlines(), 1) if inline.search(line)]
    assert found == []


# (sub-object field on block B, its bad value, the declaration that states the rule)
SAME_RULE = [
    ("preventive", {"interval": 5, "opportunity": 6}, s.PREVENTIVE),
    ("preventive", {"interval": 5, "policy": "age", "threshold": 0.1}, s.PREVENTIVE),
    ("preventive", {"interval": 5, "policy": "block", "duration": 5}, s.PREVENTIVE),
    ("preventive", {"interval": 5, "policy": "condition"}, s.PREVENTIVE),
    ("inspection", {"interval": 10, "offset": 10}, s.PROOF_TEST),
    ("inspection", {"interval": 10, "duration": 12}, s.PROOF_TEST),
    ("inspection", {"interval": 10, "coverage": 0.5, "full_test": 25}, s.PROOF_TEST),
    ("repair_quality", {"model": "perfect", "q": 0.2}, s.REPAIR_QUALITY),
    ("repair_quality", {"model": "kijima1", "replace_after": 2}, s.REPAIR_QUALITY),
    ("capacity", [{"value": 1, "probability": 0.5}], s.CAPACITY),
    ("costs", {"repair": {"min": 5, "max": 1}}, s.BLOCK_COSTS),
]


@pytest.mark.parametrize(("key", "value", "declaration"), SAME_RULE)
def test_a_run_refuses_a_sub_object_in_its_declarations_words(key: str, value: Any, declaration: s.Check) -> None:
    d = series(block("B", exp_model(1e-3), instant_repair=True, **{key: value}))
    with pytest.raises(InputError) as run:
        normalize_diagram(d)
    with pytest.raises(InputError) as stored:
        declaration(value, key)
    assert run.value.field == f"diagram.nodes.B.{stored.value.field}"
    assert run.value.rule == stored.value.rule


def test_the_toolkit_reads_json_numbers() -> None:
    assert not is_number(True) and not is_integer(False)
    assert is_number(np.float64(1.5)) and is_integer(np.int64(3)) and is_integer(3.0)
    assert not is_integer(3.0, whole_floats=False) and not is_integer(float("inf"))
    # an int is whole as it is, even past what a float holds
    assert check_integer(2**63 + 1, "n", 0) == 2**63 + 1
    with pytest.raises(InputError, match=r"^n: must be an integer$"):
        check_integer(2.5, "n")
    with pytest.raises(InputError, match=r"^n: must be an integer from 1 to 4$"):
        check_integer(5, "n", 1, 4)
    with pytest.raises(InputError, match=r"^n: must be an integer >= 1$"):
        check_integer(0, "n", 1)
    with pytest.raises(InputError, match=r"^x: must be a finite number$"):
        check_number(float("nan"), "x")
    with pytest.raises(InputError, match=r"^x: must be in \(0, 1\]$"):
        check_number(0.0, "x", 0.0, 1.0, lo_open=True)
    with pytest.raises(InputError, match=r"^x: must be > 0$"):
        check_number(-1, "x", 0.0, lo_open=True)
    assert check_number(np.float32(0.5), "x", 0.0, 1.0) == 0.5
