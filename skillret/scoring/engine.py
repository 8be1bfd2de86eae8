"""The scoring engine: whole-query chunks in, per-query metric values out, all vectorized (the
rows in tie-rule order, each query's top ``depth`` looked up in the qrels and laid out as dense
[queries x depth] grades, which every measure reads through shared cumulative sums); and the
judgment lookups it needs (:class:`Judgments`), each built once per qrels on first use: judged
query positions, grades (by fingerprint when the ids have one length, else by hash), relevant
counts and ideal gains.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.qrels import Qrels
from skillret.columnar.strings import EqualLengthIds, bytes_of_length, repeated_rows
from skillret.errors import InputError
from skillret.scoring.aggregate import QueryResults
from skillret.measures.registry import UNJUDGED, Ranking
from skillret.measures import registry
from skillret.scoring.names import Metric
from skillret.scoring.ordering import rank_order
from skillret.columnar.runs import RunChunk

#: :meth:`Judgments.grades_by_prints` compares each result with every judgment of its query
#: while that makes at most this many comparisons per result; beyond, a hash lookup is cheaper.
PRINT_LOOKUP_FANOUT = 4


class Judgments:
    """Prepared lookups over ``qrels`` (built on first use, then kept)."""

    def __init__(self, qrels: Qrels):
        self.qrels = qrels
        self._queries = dict(zip(qrels.queries.to_pylist(), range(len(qrels.queries))))
        self._row_query = qrels.row_query()
        self._relevant: dict[int, np.ndarray] = {}
        self._prints: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._keys: tuple[pa.Array, np.ndarray] | None = None
        self._positive: tuple[np.ndarray, np.ndarray] | None = None

    def query_index(self, query_ids: pa.Array) -> np.ndarray:
        """Position of each id among the judged queries, -1 for a query without judgments (one
        dict lookup per query of a chunk: `pc.index_in` would rebuild a hash table each time)."""
        return np.fromiter((self._queries.get(q, -1) for q in query_ids.to_pylist()),
                           dtype=np.int64, count=len(query_ids))

    def relevant(self, level: int, query_index: np.ndarray) -> np.ndarray:
        """int64 per ``query_index``: judgments with grade >= level (0 for -1)."""
        if level not in self._relevant:  # a 0 appended, which query index -1 reads
            self._relevant[level] = np.append(self.qrels.relevant_counts(level), 0)
        return self._relevant[level][query_index]

    def grades(self, query_index: np.ndarray, skill_ids: pa.Array) -> np.ndarray:
        """Grade of each (judged query index, skill id) pair; ``UNJUDGED`` when not judged."""
        qrels = self.qrels
        if self._keys is None:
            skills = pc.unique(qrels.skill_id)
            skills = skills.take(pc.array_sort_indices(skills))
            sidx = arrow.to_numpy(pc.index_in(qrels.skill_id, value_set=skills)).astype(np.int64)
            self._keys = (skills, self._row_query * len(skills) + sidx)
        skills, keys = self._keys
        out = np.full(len(query_index), UNJUDGED, dtype=np.int64)
        if len(query_index) == 0 or len(keys) == 0:
            return out
        sidx = pc.fill_null(pc.index_in(skill_ids, value_set=skills), arrow.scalar(np.int32(-1)))
        sidx = arrow.to_numpy(sidx).astype(np.int64)
        key = query_index * len(skills) + sidx
        pos = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
        found = (query_index >= 0) & (sidx >= 0) & (keys[pos] == key)
        out[found] = qrels.relevance[pos[found]]
        return out

    def grades_by_prints(self, query_index: np.ndarray, ids: EqualLengthIds,
                         rows: np.ndarray) -> np.ndarray | None:
        """:meth:`grades` for the ids ``ids`` holds at ``rows``, by fingerprint.

        Each result is compared with every judgment of its query: a few (1 to 3 in SkillRet),
        so this beats hashing the ids. Equal prints are confirmed byte for byte. Returns None
        (use :meth:`grades`) when queries carry so many judgments that the comparisons would
        outnumber the results more than :data:`PRINT_LOOKUP_FANOUT` times.
        """
        qrels = self.qrels
        n = len(rows)
        out = np.full(n, UNJUDGED, dtype=np.int64)
        if n == 0 or len(qrels) == 0:
            return out
        offsets = qrels.offsets
        judged = query_index >= 0
        query = np.where(judged, query_index, 0)
        start = offsets[query]
        count = np.where(judged, offsets[query + 1] - start, 0)
        total = int(count.sum())
        if total > PRINT_LOOKUP_FANOUT * n:
            return None
        width = ids.matrix.shape[1]
        if width not in self._prints:  # judged ids of that width; others never match, masked out
            matrix, fits = bytes_of_length(qrels.skill_id, width)
            self._prints[width] = (EqualLengthIds(matrix).prints, matrix, fits)
        prints, matrix, fits = self._prints[width]
        probe = np.repeat(np.arange(n), count)
        judgment = np.repeat(start - (np.cumsum(count) - count), count) + np.arange(total)
        hit = (prints[judgment] == ids.prints[rows][probe]) & fits[judgment]
        probe, judgment = probe[hit], judgment[hit]
        exact = (matrix[judgment] == ids.matrix[rows[probe]]).all(axis=1)
        out[probe[exact]] = qrels.relevance[judgment[exact]]
        return out

    def ideal(self, query_index: np.ndarray, depth: int) -> np.ndarray:
        """float64 [len(query_index), depth]: each query's positive grades, descending,
        0-padded."""
        qrels = self.qrels
        take = np.minimum(self.relevant(1, query_index), depth)  # grades >= 1: the positive ones
        if self._positive is None:  # grouped by query, descending within it; each query's start
            positive = qrels.relevance > 0
            order = np.lexsort((-qrels.relevance[positive], self._row_query[positive]))
            self._positive = (qrels.relevance[positive][order].astype(np.float64),
                              np.concatenate([[0], np.cumsum(self._relevant[1])]))
        grades, starts = self._positive
        rows = np.repeat(np.arange(len(query_index)), take)
        within = np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take)
        out = np.zeros((len(query_index), depth), dtype=np.float64)
        out[rows, within] = grades[np.repeat(starts[np.maximum(query_index, 0)], take) + within]
        return out


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
        rows, top_rank = rank_order(chunk.row_query, chunk.score, chunk.skill_id, depth)
    else:
        perm, ranks = ranked
        top = np.flatnonzero(ranks <= depth)
        rows, top_rank = top if perm is None else perm[top], ranks[top]
    top_query = chunk.row_query[rows]
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

