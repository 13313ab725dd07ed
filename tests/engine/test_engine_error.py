"""The engine's refusal is structured: `path` (where, as data: names and list positions) and
`rule` (what was broken). The library reads those to put a refusal under its own field and
never parses the message; a grep of the library holds it to that."""

from __future__ import annotations

import itertools
import json
import pickle
import re
from pathlib import Path
from typing import Any

import pytest

from bathtub import _engine
from bathtub.errors import BathtubError, EngineError, InputError
from bathtub.rbd.decisions import what_to_improve

LIBRARY = Path(__file__).resolve().parents[2] / "python" / "bathtub"
NO_REPAIR = "a repair model (or instant_repair) is required for an availability simulation"
PLAN = {"kind": "availability", "time": 100.0, "crews": 0, "compared": "up", "seed": 1,
        "replication_start": 0, "replications": 0}


def exp(rate: float) -> dict[str, Any]:
    return {"distribution_id": "exponential", "params": {"failure_rate": rate}}


def series(*ids: str, repaired: bool = True) -> dict[str, Any]:
    """Engine-form blocks in series, each with a repair model when `repaired`."""
    blocks = [{"id": i, "type": "component", "model": exp(1e-3), **({"repair": exp(0.1)} if repaired else {})}
              for i in ids]
    names = ["in", *ids, "out"]
    return {"nodes": [{"id": "in", "type": "input"}, *blocks, {"id": "out", "type": "output"}],
            "edges": [{"source": a, "target": b} for a, b in itertools.pairwise(names)]}


def test_a_refusal_carries_its_path_as_data() -> None:
    good, bad = series("a", "b"), series("a", "b")
    del bad["nodes"][2]["repair"]
    with pytest.raises(EngineError) as e:
        _engine.compare_designs([json.dumps(good), json.dumps(bad)], PLAN)
    assert e.value.path == ("designs", 1, 'node "b"')
    assert e.value.rule == NO_REPAIR
    assert str(e.value) == f'designs[1]: node "b": {NO_REPAIR}'
    assert e.value.below(2) == f'node "b": {NO_REPAIR}'
    assert isinstance(e.value, BathtubError) and isinstance(e.value, ValueError)
    # Runs on a cluster raise it in a worker process: it crosses back whole.
    back = pickle.loads(pickle.dumps(e.value))
    assert (type(back), back.path, back.rule, str(back)) == (EngineError, e.value.path, NO_REPAIR, str(e.value))


def test_a_refusal_of_the_whole_call_has_no_path() -> None:
    with pytest.raises(EngineError) as e:
        _engine.simulate_availability(json.dumps(series("a")), 10.0, 10, 0,
                                      {"seed": 1, "replication_start": 0, "replications": 5,
                                       "target_half_width": 0.1})
    assert e.value.path == ()
    assert str(e.value) == e.value.rule == "give replications or target_half_width, not both"
    # The library raises it too, with a message only (a cluster that cannot run).
    e2 = EngineError("cluster: the scheduler has no workers")
    assert (e2.path, e2.rule, str(e2)) == ((), "cluster: the scheduler has no workers", str(e2.rule))


def test_a_decision_puts_the_refusal_under_the_field_the_path_names() -> None:
    # Python's checks accept a cost_rate objective; the engine finds the diagram has no costs.
    with pytest.raises(InputError) as e:
        what_to_improve(series("a"), check_only=True, repairable=True, horizon=100.0, objective="cost_rate")
    assert (e.value.field, e.value.rule) == ("objective", "cost_rate: the diagram has no costs (set block or "
                                                          "diagram costs)")


# Parsing an error's text to find the field: splitting at the engine's "]: ", or reading a
# message (str(e), msg, message) with a string method to find what it names.
PARSING = [
    re.compile(r"""\.(r?partition|r?split|r?index|r?find|startswith|removeprefix)\(\s*f?["']\]: """),
    re.compile(r"""\b(str\((e|err|exc|error)\)|msg|message)\s*\.\s*"""
               r"""(r?partition|r?split|startswith|r?index|r?find|removeprefix)\("""),
    re.compile(r"""startswith\(\s*f?["'](node |designs\[|block |phase |\{field\})"""),
]


def _parsing(line: str) -> bool:
    return any(p.search(line) for p in PARSING)


def test_no_library_code_parses_an_engine_message() -> None:
    hits = [f"{path.relative_to(LIBRARY)}:{n}: {line.strip()}"
            for path in sorted(LIBRARY.rglob("*.py"))
            for n, line in enumerate(path.read_text().splitlines(), 1) if _parsing(line)]
    assert hits == []


def test_the_grep_finds_the_parsing_it_forbids() -> None:
    # The lines that read the refused field out of engine messages before the error had a path.
    old = ['raise InputError(f"options.{bid}[{i}]", str(e).partition("]: ")[2] or str(e)) from None',
           'if msg.startswith(f"{field}: "):',
           'if msg.startswith("designs[") and "]: " in msg:',
           'return InputError("options", f"the design ({where}): {msg[msg.index(\']: \') + 3:]}")',
           'rest = str(err).split("]: ", 1)[1]']
    assert [line for line in old if not _parsing(line)] == []
    assert not _parsing('head, _, rest = block_id.partition("/")')  # ids, not messages
