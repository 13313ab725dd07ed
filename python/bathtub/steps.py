"""Step curves thinned for storage: every k-th step and the last, so a 10^6-row estimate does not
store 10^6 rows. Figures are computed on the full curve before it is thinned."""

from __future__ import annotations

from typing import Any

import numpy as np


def kept(size: int, limit: int) -> np.ndarray | None:
    """The indices a curve of `size` steps keeps (at most `limit` evenly spaced, and the last), or
    None when it needs no thinning."""
    if size <= limit:
        return None
    return np.unique(np.concatenate([np.linspace(0, size - 1, limit).astype(int), [size - 1]]))


def thin(curve: dict[str, Any], limit: int) -> dict[str, Any]:
    """The curve with its per-step lists (those as long as `time`) thinned, marked `thinned_from`
    (the full length); the curve itself when it is short enough."""
    size = len(curve.get("time", []))
    keep = kept(size, limit)
    if keep is None:
        return curve
    out = {k: [v[i] for i in keep] if isinstance(v, list) and len(v) == size else v for k, v in curve.items()}
    return {**out, "thinned_from": size}
