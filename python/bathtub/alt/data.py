"""The units of an accelerated life test, checked once: times, which failed, the stress or two
stresses each was tested at. Fitting (`fit`), the stress-life plot (`plot`) and the bootstrap
all read this one shape."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bathtub.alt.relationships import AltSpec, check_stresses
from bathtub.errors import InputError

FIELDS = ("x", "c", "stress", "stress2")  # the names bad input is reported under


@dataclass(frozen=True)
class AltData:
    """Units of an ALT: times t > 0, failed (else right-censored), one or two stresses each."""

    t: np.ndarray
    failed: np.ndarray
    stresses: tuple[np.ndarray, ...]

    def levels(self) -> tuple[np.ndarray, np.ndarray]:
        """(distinct stress rows, level index of each unit)."""
        rows = np.column_stack(self.stresses)
        uniq, inv = np.unique(rows, axis=0, return_inverse=True)
        return uniq, np.asarray(inv).ravel()


def alt_data(spec: AltSpec, t: Sequence[float], failed: Sequence[bool] | None, stress: Sequence[float],
             stress2: Sequence[float] | None = None, fields: Sequence[str] = FIELDS) -> AltData:
    """Checked arrays: times finite > 0, stresses finite (> 0 where logs or reciprocals are
    taken), at least two stress levels (three distinct points with two stresses), a failure."""
    fx, fc, fs, fs2 = fields
    tt = np.asarray(t, dtype=float)
    n = tt.size
    if n == 0:
        raise InputError(fx, "no units")
    bad = ~np.isfinite(tt) | (tt <= 0)
    if bad.any():
        raise InputError(fx, f"row {int(np.argmax(bad))}: times must be finite and > 0")
    ff = np.ones(n, bool) if failed is None else np.asarray(failed, dtype=bool)
    rel = spec.relationship
    given = (stress, stress2)[: rel.stresses]
    if rel.stresses == 2 and stress2 is None:
        raise InputError(fs2, f"{spec.id} takes two stresses: map a stress2 column")
    if rel.stresses == 1 and stress2 is not None:
        raise InputError(fs2, f"{spec.id} takes one stress")
    arrays = tuple(np.asarray(s, dtype=float) for s in given)
    for a, f in zip(arrays, (fs, fs2)):
        if a.size != n or ff.size != n:
            raise InputError(f, f"{a.size} values for {n} times")
    check_stresses(spec, arrays, (fs, fs2)[: rel.stresses])
    data = AltData(tt, ff, arrays)
    uniq, _ = data.levels()
    need = 1 + rel.stresses
    g = rel.design(tuple(uniq[:, j] for j in range(rel.stresses)))
    if uniq.shape[0] < need or np.linalg.matrix_rank(np.column_stack([np.ones(len(g)), g])) < need:
        what = "stress levels" if rel.stresses == 1 else "(stress, stress2) combinations, not all on one line"
        raise InputError(fs if rel.stresses == 1 else fs2,
                         f"{spec.id} needs at least {need} distinct {what}; got {uniq.shape[0]} level(s)")
    if not ff.any():
        raise InputError(fc, "no failures: an ALT fit needs at least one failure (all censored at some "
                             "levels is fine)")
    return data
