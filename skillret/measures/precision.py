"""Precision@K: relevant skills within the top K, over K (trec_eval's ``P_K``).

    Precision@K = |relevant within the top K| / K

The denominator is K even when fewer than K results were retrieved, so a short ranking is not
rewarded for stopping early. An empty ranking scores 0. ir_measures writes P@K, ranx
``precision@K`` (which orders tied scores in no stated order: numba's sort of the scores).
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register


def compute(ranking: Ranking, k: int, rel: int) -> np.ndarray:
    return ranking.column(ranking.relevant_so_far(rel), k) / float(k)


MEASURE = register("Precision", compute, __doc__, order=40, official=True, plotted=True,
                   tools={"trec_eval": ("P_K",), "ir_measures": ("P@K",),
                          "ranx": ("precision@K",)})
