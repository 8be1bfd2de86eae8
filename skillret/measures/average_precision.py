"""MAP@K, per query AP@K: average precision cut at K (trec_eval's ``map_cut_K``).

    AP@K = (sum over relevant results at ranks r <= K of Precision@r) / |relevant judged|

and 0 when no judged skill is relevant. The denominator counts every relevant judgment, so
relevant skills the ranking missed (or ranked below K) pull AP down. Averaged over queries this
is MAP@K.

MAP, without a cutoff, is trec_eval's ``map``: the same sum over the whole ranking. ir_measures
writes AP@K and AP (per query), ranx ``map@K`` and ``map``, with these definitions (ranx's tied
scores aside: it orders them in no stated order).
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register, safe_divide


def compute(ranking: Ranking, k: int | None, rel: int) -> np.ndarray:
    total = ranking.column(ranking.precision_sum_so_far(rel), k)
    return safe_divide(total, ranking.relevant(rel))


MEASURE = register("MAP", compute, __doc__, order=20, official=True, whole=True, plotted=True,
                   tools={"trec_eval": ("map_cut_K", "map"), "ir_measures": ("AP@K", "AP"),
                          "ranx": ("map@K", "map")})
