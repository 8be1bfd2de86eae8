"""Completeness@K: 1 when every relevant skill of the query is within the top K, else 0.

    Completeness@K = 1 if |relevant| > 0 and |relevant within the top K| = |relevant|, else 0

This is SkillRet's ``recall_K == 1``: an agent that needs several skills only succeeds when it
gets all of them. A query with no relevant judgment scores 0.
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register


def compute(ranking: Ranking, k: int, rel: int) -> np.ndarray:
    needed = ranking.relevant(rel)
    found = ranking.column(ranking.relevant_so_far(rel), k)
    return ((needed > 0) & (found == needed)).astype(np.float64)


MEASURE = register("Completeness", compute, __doc__, order=50, official=True, plotted=True)
