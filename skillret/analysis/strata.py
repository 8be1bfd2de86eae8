"""Query strata: facet values as stratum labels, the order strata are listed in, and the strata
each query falls in (`facet_strata`), from the judgments or the facets' files.
"""

from __future__ import annotations

import math
from typing import Iterable

MISSING = "(missing)"
NONE = "(none)"
REQUIRED_GRADE = 2
CATEGORY_FIELD = "category"


def label(value) -> str:
    """A facet value as the key it is reported under: numbers as written (1.0 as 1), booleans as
    JSON spells them, null/NaN/empty as `(missing)`."""
    if value is None or value == "":
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return MISSING
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def stratum_order(labels: Iterable[str]) -> list[str]:
    """Numeric order when every value is a number, else text order; (none), (missing) last."""
    labels = set(labels)
    special = [s for s in (NONE, MISSING) if s in labels]
    plain = labels - {NONE, MISSING}
    numbers = {s: _number(s) for s in plain}
    if plain and all(v is not None for v in numbers.values()):
        ordered = sorted(plain, key=lambda s: (numbers[s], s))
    else:
        ordered = sorted(plain)
    return ordered + special


def judgments(qrels) -> dict:
    """Loaded qrels (`skillret.read_qrels`) as arrays: query_id, skill_id (object arrays of
    str), relevance (int)."""
    import numpy as np

    return {"query_id": np.array(qrels.query_id.to_pylist(), dtype=object),
            "skill_id": np.array(qrels.skill_id.to_pylist(), dtype=object),
            "relevance": np.asarray(qrels.relevance)}


def _lookup(keys, values, wanted, default: str):
    """`values[i]` where `keys[i] == w` for each `w` in `wanted`, else `default`."""
    import numpy as np

    keys = np.asarray(keys, dtype=object)
    wanted = np.asarray(wanted, dtype=object)
    out = np.full(len(wanted), default, dtype=object)
    if len(keys) == 0 or len(wanted) == 0:
        return out
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys[order], wanted), len(keys) - 1)
    found = keys[order][at] == wanted
    out[found] = np.asarray(values, dtype=object)[order][at[found]]
    return out


def facet_strata(name: str, facets, query_ids, judgment_arrays: dict, level: int):
    """`(row, stratum)` arrays: the strata of each query of `query_ids` (rows are positions
    in it); one per query for a scalar facet, one per category of its relevant skills for
    skill_category. `facets`: the facets' files (`Facets`);
    `judgment_arrays`: `judgments`."""
    import numpy as np

    rows = np.arange(len(query_ids))
    if name in ("n_required", "n_relevant"):
        grade = REQUIRED_GRADE if name == "n_required" else level
        ids, inverse = np.unique(judgment_arrays["query_id"], return_inverse=True)
        counts = np.bincount(inverse, weights=judgment_arrays["relevance"] >= grade,
                             minlength=len(ids)).astype(np.int64)
        labels = _lookup(ids, [str(c) for c in counts.tolist()], query_ids, "0")
        return rows, labels
    if name == "skill_category":
        skills = facets.skills
        relevant = judgment_arrays["relevance"] >= level
        pair_query = _lookup(query_ids, rows, judgment_arrays["query_id"][relevant],
                             -1).astype(np.int64)
        categories = _lookup(skills.ids, [label(v) for v in skills.values(CATEGORY_FIELD)],
                             judgment_arrays["skill_id"][relevant], MISSING)
        keep = pair_query >= 0
        pair_query, categories = pair_query[keep], categories[keep]
        names, codes = np.unique(categories.astype(str), return_inverse=True)
        key = np.unique(pair_query * max(len(names), 1) + codes)   # a category once per query
        pair_rows, pair_labels = key // max(len(names), 1), names[key % max(len(names), 1)]
        without = np.setdiff1d(rows, pair_rows)
        return (np.concatenate([pair_rows, without]),
                np.concatenate([pair_labels.astype(object), np.full(len(without), NONE,
                                                                     dtype=object)]))
    table = facets.facets_file
    return rows, _lookup(table.ids, [label(v) for v in table.values(name)], query_ids, MISSING)


__all__ = ["MISSING", "NONE", "REQUIRED_GRADE", "CATEGORY_FIELD", "label", "stratum_order",
           "judgments", "facet_strata"]
