"""The shape of the code, held by a test so it cannot drift back (DESIGN.md, "Keep it legible"):
no import circles among the library's and the service's modules, no private name (`_x`) of one
module used by another, and no module past the size where it stops being about one thing.

Imports are read from the source (every `import`, including those inside functions and under
TYPE_CHECKING: a circle that only type hints close is still two modules that need each other).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.source import parse

ROOT = Path(__file__).resolve().parent.parent / "python"
MAX_LINES = 620  # "split a file that passes ~600 lines by what it holds"
# The compiled engine is private by name; who may import it is tests/engine/test_one_door.py's rule.
ENGINE_MODULE = "bathtub._engine"


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


MODULES = _modules()


def _imports(name: str) -> Iterator[tuple[str, str | None, ast.AST]]:
    """(module imported, name taken from it or None, node) for every import in a module."""
    path, is_package = MODULES[name]
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                if f"{target}.{alias.name}" in MODULES or f"{target}.{alias.name}" == ENGINE_MODULE:
                    yield f"{target}.{alias.name}", None, node
                else:
                    yield target, alias.name, node
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node


def _graph() -> dict[str, set[str]]:
    """Who imports whom. Importing `a.b.c` first runs the packages `a` and `a.b` (their
    `__init__`), so those count as imported too, except a package the importer is itself inside
    (already running by then): `pages` -> `tools.datasets` runs `tools/__init__`, and with it
    every tool module, which is how a page module closed a circle through a report tool."""
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        found = set()
        for target, _, _ in _imports(name):
            parts = target.split(".")
            for k in range(1, len(parts) + 1):
                step = ".".join(parts[:k])
                if step in MODULES and step != name and not name.startswith(step + "."):
                    found.add(step)
        graph[name] = found
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    # the check below can fail: a two-module and a three-module circle beside a chain
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(_circles(graph)) == [["a", "b"], ["c", "d", "e"]]


def test_no_import_circles() -> None:
    assert _circles(_graph()) == []


def test_no_private_names_across_modules() -> None:
    used = []
    for name in MODULES:
        for target, taken, node in _imports(name):
            if target in MODULES and target != name and taken and taken.startswith("_") \
                    and not taken.startswith("__"):
                used.append(f"{name}:{node.lineno} imports {target}.{taken}")
    assert used == []


def test_no_private_attributes_of_other_modules() -> None:
    """`module._name` on a module imported whole is the same reach into another's insides."""
    used = []
    for name, (path, _) in MODULES.items():
        aliases = {}
        for target, taken, node in _imports(name):
            if target in MODULES and target != name and isinstance(node, ast.ImportFrom) and taken is None:
                aliases[target.rpartition(".")[2]] = target
            elif isinstance(node, ast.Import) and target in MODULES:
                for alias in node.names:
                    if alias.name == target and alias.asname:
                        aliases[alias.asname] = target
        for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and node.attr.startswith("_") and not node.attr.startswith("__"):
                used.append(f"{name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    assert used == []


def test_no_module_past_the_size_limit() -> None:
    long = {name: n for name, (path, _) in MODULES.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
