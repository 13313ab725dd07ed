"""An ALT model's share page shows its parameter rows' intervals and no Python repr: the rows
are {name, value, se, ci} (they were {value, se, lower, upper}, which printed "–" for every
interval), and the record's `life` (the life distribution's name, a string) is no metrics table
(iterating it printed `<built-in method lower of str object ...>` once per letter)."""

from __future__ import annotations

import numpy as np

from bathtub.alt import fit_alt
from bathtub_api.pages import render_page
from bathtub_api.pages.views import Section


def test_alt_share_page_shows_intervals_and_no_repr():
    rng = np.random.default_rng(5)
    s = np.repeat([350.0, 380.0, 410.0], 10)
    t = np.exp(-8.0 + 6000.0 / s) * rng.weibull(2.0, s.size)
    rec = {**fit_alt("weibull_arrhenius", t, t < 4000, s), "name": "capacitor ALT", "unit": "hours"}
    html = render_page("capacitor ALT", "model", [Section("model", "mdl_x", "capacitor ALT", rec)])
    assert "built-in method" not in html and "object at 0x" not in html
    beta = next(p for p in rec["params"] if p["name"] == "beta")
    assert f"{beta['ci'][0]:.4g}" in html and f"{beta['ci'][1]:.4g}" in html
