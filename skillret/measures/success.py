"""Success@K: 1 when a relevant skill is within the top K, else 0 (trec_eval's ``success_K``).

    Success@K = 1 if |relevant within the top K| > 0, else 0

Averaged over queries this is the hit rate: skill-retrieval papers report it as Hit@K (Hit@1:
the agent's first skill is a right one). A query with no relevant judgment, or an empty
ranking, scores 0; a ranking shorter than K counts as if non-relevant results filled it.

Neighbours: ir_measures' ``Success@K`` is this (through pytrec_eval); ranx's ``hit_rate@K`` too,
except that ranx orders tied scores in no stated order (numba's sort of the scores), so a tie
across rank K can give another value; ranx's ``hits@K`` is a count, hence ``hits`` is refused as
ambiguous.
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register


def compute(ranking: Ranking, k: int, rel: int) -> np.ndarray:
    return (ranking.column(ranking.relevant_so_far(rel), k) > 0).astype(np.float64)


MEASURE = register("Success", compute, __doc__, order=70,
                   tools={"trec_eval": ("success_K",), "ir_measures": ("Success@K",),
                          "ranx": ("hit_rate@K",)})
