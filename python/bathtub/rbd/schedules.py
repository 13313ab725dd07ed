"""Covariate schedules (the spec's CovariateSchedule): a covariate as a step function of the
block's age t, from an expression or a phase table, turned into breakpoints and values.

An expression may use t only inside floor, ceil, `//` or a comparison ("atoms"), so its value
changes in steps. Each atom's argument must move monotonically with t (t, a·t + b, and sums,
positive multiples, exp/log/log2/sqrt of such), so the ages where the atom steps are found
exactly (bisection to adjacent floating-point numbers): floor(t/100) steps at 100, not near it.
Between consecutive steps the expression is evaluated once, at the middle.

A value holds on (start, next start]: a change at age u applies to failures after u, the
counting-process convention of the fits ((start, stop] rows).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bathtub.errors import InputError
from bathtub.validate import is_number

MAX_STEPS = 100_000  # changes of one schedule (or of a block's combined path) at most
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log, "log2": np.log2,
    "sqrt": np.sqrt, "floor": np.floor, "ceil": np.ceil, "abs": np.abs,
}
VARIADIC = {"min": np.minimum, "max": np.maximum}
CONSTANTS = {"pi": math.pi, "e": math.e}
MONOTONE = {"exp": 1, "log": 1, "log2": 1, "sqrt": 1}  # increasing functions: keep a direction
STEP_HINT = "t may enter only through floor, ceil, // or a comparison (the covariate changes in steps)"

Ev = Callable[[np.ndarray], np.ndarray]


@dataclass
class Atom:
    """A step of the expression: `g` crosses an integer (floor, ceil, //) or 0 (a comparison),
    `direction` +1 or -1 as t grows."""

    g: Ev
    direction: int
    integers: bool


@dataclass
class Part:
    kind: str  # const | step | cont (continuous in t)
    ev: Ev
    direction: int = 0  # cont only: +1 increasing, -1 decreasing, 0 unknown
    atoms: list[Atom] = field(default_factory=list)


def _const(v: float) -> Part:
    return Part("const", lambda t: np.full(t.shape, v, dtype=float))


def _join(direction_a: int, direction_b: int) -> int:
    if direction_a == 0 or direction_b == 0:
        return 0
    return direction_a if direction_a == direction_b else 0


def _sign_of_const(p: Part) -> int:
    v = float(p.ev(np.zeros(1))[0])
    return 0 if v == 0 or not math.isfinite(v) else (1 if v > 0 else -1)


class _Compiler:
    def __init__(self, field_name: str) -> None:
        self.field = field_name

    def bad(self, rule: str) -> InputError:
        return InputError(self.field, rule)

    def combine(self, op: str, a: Part, b: Part, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Part:
        def ev(t: np.ndarray) -> np.ndarray:
            return fn(a.ev(t), b.ev(t))

        atoms = a.atoms + b.atoms
        if a.kind != "cont" and b.kind != "cont":
            kind = "const" if a.kind == b.kind == "const" else "step"
            return Part(kind, ev, atoms=atoms)
        if "step" in (a.kind, b.kind):
            raise self.bad(f"mixes t with a step in {op!r}: {STEP_HINT}")
        if op in ("+", "-"):
            db = b.direction if op == "+" else -b.direction
            if a.kind == "const":
                return Part("cont", ev, db)
            if b.kind == "const":
                return Part("cont", ev, a.direction)
            return Part("cont", ev, _join(a.direction, db))
        if op == "*":
            if a.kind == "const":
                return Part("cont", ev, _sign_of_const(a) * b.direction)
            if b.kind == "const":
                return Part("cont", ev, _sign_of_const(b) * a.direction)
            return Part("cont", ev, 0)
        if op == "/":
            if b.kind == "const":
                return Part("cont", ev, _sign_of_const(b) * a.direction)
            return Part("cont", ev, 0)
        if op == "**":
            if a.kind == "const":
                base = float(a.ev(np.zeros(1))[0])
                return Part("cont", ev, b.direction if base > 1 else -b.direction if 0 < base < 1 else 0)
            return Part("cont", ev, 0)
        raise self.bad(f"t inside {op!r} does not change in steps: {STEP_HINT}")

    def atom(self, what: str, arg: Part, integers: bool, ev: Ev) -> Part:
        if arg.kind != "cont":
            return Part("const" if arg.kind == "const" else "step", ev, atoms=arg.atoms)
        if arg.direction == 0:
            raise self.bad(f"the argument of {what} must move one way as t grows (t, a*t + b, sqrt/exp/log of "
                           "such), so its steps can be found exactly")
        return Part("step", ev, atoms=[Atom(arg.ev, arg.direction, integers)])

    def node(self, n: ast.AST) -> Part:
        if isinstance(n, ast.Constant):
            if not is_number(n.value):
                raise self.bad(f"{n.value!r} is not a number")
            return _const(float(n.value))
        if isinstance(n, ast.Name):
            if n.id == "t":
                return Part("cont", lambda t: t.astype(float), 1)
            if n.id in CONSTANTS:
                return _const(CONSTANTS[n.id])
            raise self.bad(f"unknown name {n.id!r}; names are t, pi, e")
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            a = self.node(n.operand)
            if isinstance(n.op, ast.UAdd):
                return a
            return Part(a.kind, lambda t: -a.ev(t), -a.direction, a.atoms)
        if isinstance(n, ast.BinOp):
            a, b = self.node(n.left), self.node(n.right)
            ops: dict[type, tuple[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]] = {
                ast.Add: ("+", np.add), ast.Sub: ("-", np.subtract), ast.Mult: ("*", np.multiply),
                ast.Div: ("/", np.divide), ast.Pow: ("**", np.power), ast.Mod: ("%", np.mod),
            }
            if isinstance(n.op, ast.FloorDiv):
                if "cont" in (a.kind, b.kind):
                    q = self.combine("/", a, b, np.divide)
                    return self.atom("//", q, True, lambda t: np.floor_divide(a.ev(t), b.ev(t)))
                return self.combine("//", a, b, np.floor_divide)
            if type(n.op) not in ops:
                raise self.bad(f"operator {type(n.op).__name__} is not allowed")
            name, fn = ops[type(n.op)]
            return self.combine(name, a, b, fn)
        if isinstance(n, ast.Compare):
            parts = [self.node(n.left), *(self.node(c) for c in n.comparators)]
            cmps = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater, ast.GtE: np.greater_equal,
                    ast.Eq: np.equal, ast.NotEq: np.not_equal}
            result: Part | None = None
            for op, left, right in zip(n.ops, parts, parts[1:]):
                if type(op) not in cmps:
                    raise self.bad(f"comparison {type(op).__name__} is not allowed")
                fn = cmps[type(op)]
                diff = self.combine("-", left, right, np.subtract)
                if diff.kind == "cont" and isinstance(op, (ast.Eq, ast.NotEq)):
                    raise self.bad("== or != with t holds at an instant only; compare with <, <=, > or >=")

                def ev(t: np.ndarray, fn: Any = fn, left: Part = left, right: Part = right) -> np.ndarray:
                    return fn(left.ev(t), right.ev(t)).astype(float)

                one = self.atom("a comparison", diff, False, ev)
                if result is None:
                    result = one
                else:
                    prev = result
                    result = Part("step" if "step" in (prev.kind, one.kind) else "const",
                                  lambda t, p=prev, o=one: p.ev(t) * o.ev(t), atoms=prev.atoms + one.atoms)
            assert result is not None
            return result
        if isinstance(n, ast.Call):
            if not isinstance(n.func, ast.Name) or n.keywords:
                raise self.bad("only plain calls of the listed functions are allowed")
            name = n.func.id
            args = [self.node(a) for a in n.args]
            if name in VARIADIC:
                if len(args) < 2:
                    raise self.bad(f"{name} takes at least 2 arguments")
                fn2 = VARIADIC[name]

                def ev_v(t: np.ndarray, args: list[Part] = args, fn2: Any = fn2) -> np.ndarray:
                    out = args[0].ev(t)
                    for a in args[1:]:
                        out = fn2(out, a.ev(t))
                    return out

                conts = [a for a in args if a.kind == "cont"]
                if conts and any(a.kind == "step" for a in args):
                    raise self.bad(f"{name} mixes t with a step: {STEP_HINT}")
                if conts:
                    d = conts[0].direction
                    for a in conts[1:]:
                        d = _join(d, a.direction)
                    return Part("cont", ev_v, d)
                kind = "const" if all(a.kind == "const" for a in args) else "step"
                return Part(kind, ev_v, atoms=[x for a in args for x in a.atoms])
            if name not in FUNCTIONS:
                raise self.bad(f"unknown function {name!r}; functions are "
                               f"{', '.join([*FUNCTIONS, *VARIADIC])}")
            if len(args) != 1:
                raise self.bad(f"{name} takes 1 argument")
            a, fn1 = args[0], FUNCTIONS[name]

            def ev1(t: np.ndarray, a: Part = a, fn1: Any = fn1) -> np.ndarray:
                return fn1(a.ev(t))

            if name in ("floor", "ceil"):
                return self.atom(name, a, True, ev1)
            if a.kind == "cont":
                return Part("cont", ev1, a.direction * MONOTONE.get(name, 0))
            return Part(a.kind, ev1, atoms=a.atoms)
        raise self.bad(f"{type(n).__name__} is not allowed in a schedule expression")


@dataclass(frozen=True)
class Expression:
    """A checked expression: `value(t)` vectorised, and the atoms whose steps it changes at."""

    text: str
    ev: Ev
    atoms: tuple[Atom, ...]

    def breaks(self, hi: float, field_name: str) -> np.ndarray:
        """Ages in (0, hi) where the value may change, sorted."""
        out = [np.empty(0)]
        for a in self.atoms:
            out.append(_atom_breaks(a, hi, field_name, self.text))
        b = np.unique(np.concatenate(out))
        return b[(b > 0) & (b < hi)]


def compile_expression(text: str, field_name: str) -> Expression:
    """Parse and check an expression (422 naming `field_name` with the rule it breaks)."""
    if not isinstance(text, str) or not text.strip() or len(text) > 400:
        raise InputError(field_name, "must be an expression in t of 1 to 400 characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise InputError(field_name, f"cannot parse {text!r}: {e.msg}") from None
    part = _Compiler(field_name).node(tree.body)
    if part.kind == "cont":
        raise InputError(field_name, f"changes continuously with t: {STEP_HINT}")
    with np.errstate(all="ignore"):
        v0 = part.ev(np.zeros(1))[0]
    if not math.isfinite(float(v0)):
        raise InputError(field_name, f"is not a finite number at t = 0 (got {v0})")
    return Expression(text, part.ev, tuple(part.atoms))


def _atom_breaks(a: Atom, hi: float, field_name: str, text: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        g_lo, g_hi = (float(v) for v in a.g(np.array([0.0, hi])))
    if not (math.isfinite(g_lo) and math.isfinite(g_hi)):
        bad_at = 0.0 if not math.isfinite(g_lo) else hi
        raise InputError(field_name, f"{text!r}: a step's argument is not finite at t = {bad_at:g} (infinitely many "
                                     "steps, or outside its domain)")
    # levels the argument reaches after t = 0: (g(0), g(hi)] rising, [g(hi), g(0)) falling
    if a.integers:
        first = math.floor(g_lo) + 1 if a.direction > 0 else math.ceil(g_hi)
        last = math.floor(g_hi) if a.direction > 0 else math.ceil(g_lo) - 1
        if last - first + 1 > MAX_STEPS:
            raise InputError(field_name, f"{text!r} steps more than {MAX_STEPS} times before age {hi:g}; make the "
                                         "steps coarser, or use a phase table with period")
        levels = np.arange(first, last + 1, dtype=float)
    else:
        rising = a.direction > 0 and g_lo < 0.0 <= g_hi
        falling = a.direction < 0 and g_hi <= 0.0 < g_lo
        levels = np.array([0.0]) if rising or falling else np.empty(0)
    if levels.size == 0:
        return levels
    # first age where direction·(g(t) − level) >= 0, by bisection to adjacent doubles
    lo = np.zeros(levels.size)
    up = np.full(levels.size, hi)
    for _ in range(2000):
        mid = lo + (up - lo) / 2
        moving = (mid > lo) & (mid < up)
        if not moving.any():
            break
        with np.errstate(all="ignore"):
            reached = a.direction * (a.g(mid) - levels) >= 0
        up = np.where(moving & reached, mid, up)
        lo = np.where(moving & ~reached, mid, lo)
    return up


@dataclass(frozen=True)
class Schedule:
    """One covariate's schedule: `values` on (breaks[k-1], breaks[k]] (breaks[-1] = 0), the last
    one open-ended or, with `period`, the phases repeating."""

    starts: np.ndarray  # segment starts, first 0
    values: list[Any]  # numbers, or level strings for a categorical covariate
    period: float | None
    expression: Expression | None = None

    def on(self, hi: float, field_name: str) -> tuple[np.ndarray, list[Any]]:
        """Segment starts and values over [0, hi) (for an expression or a period: unrolled)."""
        if self.expression is not None:
            b = np.concatenate([[0.0], self.expression.breaks(hi, field_name)])
            ends = np.concatenate([b[1:], [hi]])
            with np.errstate(all="ignore"):
                v = self.expression.ev((b + ends) / 2)
            bad = ~np.isfinite(v)
            if bad.any():
                k = int(np.argmax(bad))
                raise InputError(field_name, f"{self.expression.text!r} is not a finite number at t = {b[k]:g}..."
                                             f"{ends[k]:g}")
            return b, [float(x) for x in v]
        if self.period is None:
            keep = self.starts < hi
            return self.starts[keep], [v for v, k in zip(self.values, keep) if k]
        reps = math.ceil(hi / self.period)
        if reps * len(self.values) > MAX_STEPS:
            raise InputError(field_name, f"the phases repeat more than {MAX_STEPS} times before age {hi:g}")
        starts = (np.arange(reps)[:, None] * self.period + self.starts[None, :]).ravel()
        values = self.values * reps
        keep = starts < hi
        return starts[keep], [v for v, k in zip(values, keep) if k]


def parse_schedule(s: Mapping[str, Any], field_name: str) -> Schedule:
    """A stored CovariateSchedule ({expression} or {table, period?}) checked and compiled."""
    if "expression" in s:
        expr = compile_expression(s["expression"], f"{field_name}.expression")
        return Schedule(np.array([0.0]), [], None, expr)
    table = s["table"]
    starts = np.array([float(p["t"]) for p in table])
    if starts[0] != 0:
        raise InputError(f"{field_name}.table[0].t", "the first phase starts at 0")
    if np.any(np.diff(starts) <= 0):
        k = int(np.argmax(np.diff(starts) <= 0)) + 1
        raise InputError(f"{field_name}.table[{k}].t", "phase start times must increase")
    period = s.get("period")
    if period is not None and not starts[-1] < period:
        raise InputError(f"{field_name}.period", f"must be beyond the last phase start ({starts[-1]:g})")
    return Schedule(starts, [p["value"] for p in table], None if period is None else float(period))
