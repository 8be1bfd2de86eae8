"""The shared input of every measure: a batch of queries' judged rankings, rows queries and
columns ranks 1..depth (the largest cutoff; for a metric without one, the whole ranking and every
positive judgment). A measure reads a column of a cumulative sum along the ranks, computed once
per batch; ``np.cumsum`` adds in rank order, as trec_eval's C loops do, so per-query values are
bit-identical to trec_eval's.
"""

from __future__ import annotations

import functools
import math

import numpy as np

#: Grade of a retrieved skill that is not judged, and of the padding beyond the last result.
UNJUDGED = np.iinfo(np.int64).min

@functools.cache
def log2_discounts(depth: int) -> np.ndarray:
    """``log2(rank + 1)`` for ranks 1..depth, from the C library's ``log2`` (as trec_eval)."""
    return np.array([math.log2(rank + 1) for rank in range(1, depth + 1)], dtype=np.float64)


class Ranking:
    """Judged top-``depth`` rankings of ``n`` queries.

    grades:    int64 [n, depth], the grade of the skill at each rank; :data:`UNJUDGED` for a
               retrieved skill without judgment and for ranks past the end of the ranking.
               Negative judged grades are kept as written.
    retrieved: int64 [n], the number of results each query retrieved (the whole ranking).
    ideal:     float64 [n, depth], the query's positive judged grades sorted descending, 0-padded.
    relevant:  ``relevant(level)`` gives int64 [n], the number of judged skills with
               grade >= level (missed ones included).
    """

    def __init__(self, grades: np.ndarray, retrieved: np.ndarray, ideal: np.ndarray, relevant):
        self.grades = grades
        self.retrieved = retrieved
        self.ideal = ideal
        self.depth = grades.shape[1]
        self._relevant = relevant
        self._cache: dict = {}

    def _memo(self, key, build):
        value = self._cache.get(key)
        if value is None:
            value = self._cache[key] = build()
        return value

    def relevant(self, level: int) -> np.ndarray:
        return self._memo(("relevant", level), lambda: np.asarray(self._relevant(level), np.int64))

    def is_relevant(self, level: int) -> np.ndarray:
        """bool [n, depth]: grade >= level (never true for unjudged or padding)."""
        return self._memo(("is_rel", level), lambda: self.grades >= level)

    def relevant_so_far(self, level: int) -> np.ndarray:
        """int64 [n, depth]: relevant results at ranks 1..k, for k = 1..depth."""
        return self._memo(("rel_cum", level),
                          lambda: np.cumsum(self.is_relevant(level), axis=1, dtype=np.int64))

    def discounted_gain_so_far(self) -> np.ndarray:
        """float64 [n, depth]: DCG at each cutoff; gain = grade when positive, else 0."""
        def build():
            gains = np.where(self.grades > 0, self.grades, 0).astype(np.float64)
            return np.cumsum(gains / log2_discounts(self.depth), axis=1)
        return self._memo("dcg_cum", build)

    def ideal_gain_so_far(self) -> np.ndarray:
        """float64 [n, depth]: ideal DCG at each cutoff."""
        return self._memo("idcg_cum",
                          lambda: np.cumsum(self.ideal / log2_discounts(self.depth), axis=1))

    def judged_so_far(self) -> np.ndarray:
        """int64 [n, depth]: judged results (any grade, negative ones too) at ranks 1..k."""
        return self._memo("judged_cum",
                          lambda: np.cumsum(self.grades != UNJUDGED, axis=1, dtype=np.int64))

    def precision_sum_so_far(self, level: int) -> np.ndarray:
        """float64 [n, depth]: sum of precision at each relevant rank within the cutoff."""
        def build():
            ranks = np.arange(1, self.depth + 1, dtype=np.float64)
            hits = self.is_relevant(level)
            precision = np.where(hits, self.relevant_so_far(level) / ranks, 0.0)
            return np.cumsum(precision, axis=1)
        return self._memo(("prec_cum", level), build)

    def first_relevant_rank(self, level: int) -> np.ndarray:
        """int64 [n]: rank of the first relevant result within depth, 0 when there is none."""
        def build():
            hits = self.is_relevant(level)
            first = np.argmax(hits, axis=1) + 1
            return np.where(hits.any(axis=1), first, 0).astype(np.int64)
        return self._memo(("first_rel", level), build)

    def column(self, matrix: np.ndarray, k: int | None) -> np.ndarray:
        """The value at cutoff k (the engine lays out ``depth >= k``); for ``k=None``, over the
        whole ranking (the last column)."""
        return matrix[:, -1 if k is None else k - 1]


def safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (trec_eval's convention)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
