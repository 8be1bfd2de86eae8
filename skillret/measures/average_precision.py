"""MAP@K, per query AP@K: average precision cut at K (trec_eval's ``map_cut_K``).

    AP@K = (sum over relevant results at ranks r <= K of Precision@r) / |relevant judged|

and 0 when no judged skill is relevant. The denominator counts every relevant judgment, so
relevant skills the ranking missed (or ranked below K) pull AP down. Averaged over queries this
is MAP@K.
"""

from __future__ import annotations

import numpy as np

from skillret.measures.base import Ranking, safe_divide
from skillret.measures.registry import register


def compute(ranking: Ranking, k: int, rel: int) -> np.ndarray:
    total = ranking.column(ranking.precision_sum_so_far(rel), k)
    return safe_divide(total, ranking.relevant(rel))


MEASURE = register("MAP", compute, __doc__, aliases=("map_cut",), order=20, official=True)
