"""MRR@K, per query RR@K: the reciprocal rank of the first relevant result within the top K.

    RR@K = 1 / rank of the first relevant result, if that rank is <= K, else 0

It equals trec_eval's ``recip_rank`` on the ranking cut to its first K results. MRR, without a
cutoff, is ``recip_rank`` itself: the first relevant result anywhere in the ranking, 0 when there
is none. ir_measures writes RR@K and RR (per query), ranx ``mrr@K`` and ``mrr`` (which orders
tied scores in no stated order: numba's sort of the scores).
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register, safe_divide


def compute(ranking: Ranking, k: int | None, rel: int) -> np.ndarray:
    first = ranking.first_relevant_rank(rel)
    within = (first > 0) if k is None else (first > 0) & (first <= k)
    return safe_divide(within.astype(np.float64), np.where(within, first, 0))


MEASURE = register("MRR", compute, __doc__, order=60, whole=True, plotted=True,
                   tools={"trec_eval": ("recip_rank",), "ir_measures": ("RR@K", "RR"),
                          "ranx": ("mrr@K", "mrr")})
