"""Parsing our own source in the guard tests, robust to one CPython 3.11 bug.

CPython 3.11 keeps the AST converter's recursion depth in state shared by all threads, so an
`ast.parse` in one thread can see another thread's depth and raise "SystemError: AST
constructor recursion depth mismatch" (python/cpython#106905, fixed in later releases). In
this suite the other thread is a test server formatting a traceback (3.11's traceback module
parses the failing line to place its carets). The source is fine; parsing it again once the
other thread has moved on succeeds.
"""

from __future__ import annotations

import ast
import time

ATTEMPTS = 5


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, retried when the interpreter reports the bug above."""
    for _ in range(ATTEMPTS - 1):
        try:
            return ast.parse(source, filename)
        except SystemError as e:
            if "recursion depth mismatch" not in str(e):
                raise
            time.sleep(0.01)
    return ast.parse(source, filename)  # the last attempt: its error, if any, is the test's
