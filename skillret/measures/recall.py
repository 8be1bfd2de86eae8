"""Recall@K: the share of the query's relevant skills found within the top K (``recall_K``).

    Recall@K = |relevant within the top K| / |relevant judged|, and 0 when none is relevant

relevant = judged with grade >= the relevance level (default 1). The denominator counts every
relevant judgment, retrieved or not. ir_measures writes R@K, ranx ``recall@K`` (which orders
tied scores in no stated order: numba's sort of the scores).
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register, safe_divide


def compute(ranking: Ranking, k: int, rel: int) -> np.ndarray:
    found = ranking.column(ranking.relevant_so_far(rel), k)
    return safe_divide(found, ranking.relevant(rel))


MEASURE = register("Recall", compute, __doc__, order=30, official=True, plotted=True,
                   tools={"trec_eval": ("recall_K",), "ir_measures": ("R@K",),
                          "ranx": ("recall@K",)})
