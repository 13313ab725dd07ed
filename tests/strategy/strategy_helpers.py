"""Helpers for the strategy tests."""

from __future__ import annotations

import math
from typing import Any


def assert_json_ready(value: Any, path: str = "result") -> None:
    """Only str, bool, int, float (finite), None, lists and str-keyed dicts: what orjson/json emit as-is."""
    if value is None or isinstance(value, (str, bool, int)):
        assert type(value) in (str, bool, int, type(None)), f"{path}: {type(value)}"
        return
    if isinstance(value, float):
        assert type(value) is float and math.isfinite(value), f"{path}: {value!r}"
        return
    if isinstance(value, list):
        for i, v in enumerate(value):
            assert_json_ready(v, f"{path}[{i}]")
        return
    assert type(value) is dict, f"{path}: {type(value)}"
    for k, v in value.items():
        assert isinstance(k, str)
        assert_json_ready(v, f"{path}.{k}")
