"""JSON-ready entry points for the service: fit a dataset's columns, import a model.

`fit_dataset` is `POST /api/v1/fit` after the dataset is loaded; `import_model` is
`POST /api/import/models` (data refitted, or params-only). Both return model records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bathtub.errors import InputError
from bathtub.life import names
from bathtub.life.data import LifeData
from bathtub.life.evaluate import model_from_params
from bathtub.life.fit import fit

# refits behind the Anderson–Darling p of a table-less family (p resolves to 0.01; ~1-3 s a fit)
AD_REPLICATES = 99
FIT_KEYS = ("offset", "zi", "lfp", "method", "bounds", "modes", "base_distribution", "median_ranks")


def _split(options: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    opts = dict(options or {})
    for k in opts:
        if k not in FIT_KEYS:
            raise InputError(f"options.{k}", f"unknown option; known: {', '.join(FIT_KEYS)}")
    flags = {k: opts[k] for k in ("offset", "zi", "lfp") if k in opts}
    kw: dict[str, Any] = {}
    if "method" in opts:
        kw["method"] = opts["method"]
    if "bounds" in opts:
        kw["bounds"] = opts["bounds"]
    if "modes" in opts:
        kw["modes"] = opts["modes"]
    for key in ("base_distribution", "median_ranks"):
        if key in opts:
            kw[key] = opts[key]
    return flags, kw


def fit_dataset(
    columns: Mapping[str, Sequence[Any]],
    mapping: Mapping[str, str],
    distribution: str,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Fit `distribution` (or `best`, `mixture`) to a dataset's columns; the model record.

    `options`: offset/zi/lfp (booleans), method (mle, rrx, rry), bounds (fisher, likelihood),
    modes (2 or 3) and base_distribution for a mixture.
    """
    flags, kw = _split(options)
    data = LifeData.from_columns(columns, mapping)
    return fit(data, distribution, options=flags, ad_replicates=AD_REPLICATES, **kw).to_record()


def import_model(
    distribution: str,
    *,
    data: Mapping[str, Sequence[Any]] | None = None,
    params: Any = None,
    options: Mapping[str, Any] | None = None,
    extras: Mapping[str, Any] | None = None,
    base_distribution_id: str | None = None,
) -> dict[str, Any]:
    """A model record from `data` {x, c?, n?} (refitted, with options) or from `params` (with extras).

    `distribution` is a Bathtub id in any case or a name from another tool (`Weibull_3P`,
    `WeibullFitter`, ...; `bathtub.life.names`), its parameters in that tool's convention.
    A params-only mixture names its `base_distribution_id` (default weibull).
    """
    if (data is None) == (params is None):
        raise InputError("data", "give data or params, not both or neither")
    named = names.resolve(distribution, params=params, extras=extras, options=options)
    distribution, params, extras, options = named.distribution, named.params, named.extras, named.options
    if data is not None:
        if extras:
            raise InputError("extras", "extras go with params; with data use options")
        if not isinstance(data, Mapping) or "x" not in data:
            raise InputError("data.x", "required: an array of times")
        mapping = {k: k for k in ("x", "c", "n") if k in data}
        record = fit_dataset(data, mapping, distribution, options)
        record["params_only"] = False
        return record
    if options:
        raise InputError("options", "options go with data; with params use extras (gamma, p, f0)")
    base = (base_distribution_id or "weibull") if distribution == "mixture" else None
    return model_from_params(distribution, params, extras, base_distribution_id=base)
