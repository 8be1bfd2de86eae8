"""compare_pairs pairs the queries every per-query table holds. Tables of the same judgments hold
the same ids and are compared rather than intersected; the result must be the intersection
whatever the route."""

from __future__ import annotations

from functools import reduce

import numpy as np
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from skillret.analysis.compare import compare_pairs
from skillret.io.per_query import PerQuery

ids = st.lists(st.sampled_from([f"q{i}" for i in range(12)]), unique=True, min_size=1)


def table(query_ids, source):
    query_ids = np.array(sorted(query_ids), dtype=str)
    return PerQuery(query_ids, {"m": np.arange(len(query_ids), dtype=float)}, source)


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(ids, min_size=1, max_size=5), st.data())
def test_align_is_the_intersection(id_lists, data):
    # some tables share the first one's ids exactly (the shortcut), others do not
    id_lists = [data.draw(st.sampled_from([id_lists[0], ids_])) for ids_ in id_lists]
    tables = [table(x, f"t{i}") for i, x in enumerate(id_lists)]
    want = reduce(np.intersect1d, [t.query_ids for t in tables])
    if not len(want):
        return
    pairs = {f"r{i}": (tables[0], t) for i, t in enumerate(tables)}
    comparison, notes = compare_pairs(pairs, ["m"], baseline_label="t0", permutations=1,
                                      bootstrap=0)
    assert list(comparison.query_ids) == list(want)
    for t, (_, run) in zip(tables, comparison.pairs.values()):   # "m": each table's row
        assert list(t.query_ids[run["m"].astype(int)]) == list(want)
    assert len(notes) == sum(len(t.query_ids) != len(want) for t in tables)
