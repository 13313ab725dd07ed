"""The hand-written `_engine.pyi` names exactly what the compiled module exports, with the
same parameters (a light stand-in for mypy's stubtest)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from bathtub import _engine
from tests.source import parse

STUB = Path(_engine.__file__).with_name("_engine.pyi")


def test_stub_matches_module():
    tree = parse(STUB.read_text())
    stubbed = {n.name: [a.arg for a in n.args.args] for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    # names the stub re-exports from the library (the engine raises the library's EngineError)
    imported = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    exported = {name for name, obj in vars(_engine).items() if callable(obj) and not name.startswith("_")}
    assert set(stubbed) | set(classes) | (imported & exported) == exported
    for name, cls in classes.items():  # the members a class stub names exist on the class
        members = {m.name for m in cls.body if isinstance(m, ast.FunctionDef)} - {"__init__"}
        assert members <= set(dir(getattr(_engine, name))), name
    for name, params in stubbed.items():
        assert list(inspect.signature(getattr(_engine, name)).parameters) == params, name
