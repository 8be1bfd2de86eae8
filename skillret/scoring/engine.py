"""The scoring engine: whole-query chunks in, per-query metric values out, all vectorized (the
rows in tie-rule order, each query's top ``depth`` looked up in the qrels and laid out as dense
[queries x depth] grades, which every measure reads through shared cumulative sums).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from skillret.columnar import arrow
from skillret.errors import InputError
from skillret.scoring.aggregate import QueryResults
from skillret.scoring.lookups import UNJUDGED, Judgments
from skillret.measures.base import Ranking
from skillret.measures import registry
from skillret.scoring.names import Metric
from skillret.scoring.ordering import top_ranked
from skillret.columnar.runs import RunChunk
from skillret.columnar.strings import repeated_rows

#: Cells (queries x depth) per dense block; bounds memory whatever the depth.
DENSE_CELLS = 2_000_000


def check_unique(chunk: RunChunk, source: str | None) -> None:
    """Refuse a skill listed twice for one query (trec_eval refuses these too)."""
    earlier, later = repeated_rows(chunk.row_query, chunk.skill_id, chunk.equal_length_ids)
    if not len(later):
        return
    i = int(np.argmin(later))  # the first repeat in row order
    first, second = int(earlier[i]), int(later[i])
    query = chunk.queries[int(chunk.row_query[second])].as_py()
    skill = chunk.skill_id[second].as_py()
    line = None if chunk.line is None else int(chunk.line[second])
    also = "" if chunk.line is None else f" (first at line {int(chunk.line[first])})"
    raise InputError(source, f"query {query!r} lists skill {skill!r} twice{also}",
                     line=line, hint="each skill may appear once per query; trec_eval refuses "
                                     "duplicates too")


def evaluate_chunk(chunk: RunChunk, judgments: Judgments, metrics: Sequence[Metric],
                   source: str | None = None, ranked=None) -> QueryResults:
    """Per-query values for one chunk; ``ranked``: its (permutation, ranks) from
    :func:`~skillret.scoring.ordering.rank_order`, if known (its duplicates refused).

    Rankings are laid out as deep as the largest cutoff; a metric without a cutoff deepens
    that, for this chunk, to its longest ranking and longest ideal ranking.
    """
    nq = len(chunk.queries)
    judged_index = judgments.query_index(chunk.queries)
    retrieved = np.bincount(chunk.row_query, minlength=nq).astype(np.int64)
    depth = max((m.k for m in metrics if m.k is not None), default=1)
    if any(m.k is None for m in metrics) and nq:
        # the longest ideal ranking: the most positive (integer) grades, grade >= 1
        depth = max(depth, int(retrieved.max()), int(judgments.relevant(1, judged_index).max()))

    if ranked is None:
        check_unique(chunk, source)
        rows, top_query, top_rank = top_ranked(chunk.row_query, chunk.score, chunk.skill_id,
                                               depth)
    else:
        perm, ranks = ranked
        top = np.flatnonzero(ranks <= depth)
        rows = top if perm is None else perm[top]
        top_query, top_rank = chunk.row_query[rows], ranks[top]
    ids = chunk.equal_length_ids
    top_grade = None if ids is None else judgments.grades_by_prints(judged_index[top_query], ids,
                                                                    rows)
    if top_grade is None:
        top_grade = judgments.grades(judged_index[top_query], arrow.take(chunk.skill_id, rows))

    values = {m: np.zeros(nq, dtype=np.float64) for m in metrics}
    step = max(1, DENSE_CELLS // max(depth, 1))
    bounds = np.searchsorted(top_query, np.arange(0, nq + step, step))
    for block, q0 in enumerate(range(0, nq, step)):
        q1 = min(q0 + step, nq)
        r0, r1 = int(bounds[block]), int(bounds[block + 1])
        grades = np.full((q1 - q0, depth), UNJUDGED, dtype=np.int64)
        grades[top_query[r0:r1] - q0, top_rank[r0:r1] - 1] = top_grade[r0:r1]
        ranking = Ranking(grades, retrieved[q0:q1], judgments.ideal(judged_index[q0:q1], depth),
                          lambda lvl, q0=q0, q1=q1: judgments.relevant(lvl, judged_index[q0:q1]))
        for metric in metrics:
            compute = registry.lookup(metric.measure).compute
            values[metric][q0:q1] = compute(ranking, metric.k, metric.rel)
    return QueryResults(chunk.queries, judged_index, retrieved, values)

