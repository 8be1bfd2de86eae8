"""Judged@K: the share of the top K results that carry a judgment, of any grade (ir_measures'
``Judged@K``).

    Judged@K = |judged results within the top K| / min(K, |retrieved|), and 0 for an empty
               ranking

A judgment of any grade counts (0 and negative ones too); the relevance level plays no part.
Judged, without a cutoff, is the share over the whole ranking. For SkillRet, where a query has
one to three judged skills among thousands, a low Judged@K says the run's top K is mostly
unjudged: its scores rest on few judgments, and a gain over a baseline may come from skills no
one judged.

Neighbours: ir_measures computes it in Python with its own tie order (score as a double
descending, then skill id *ascending*), so on tied scores across rank K its value can differ;
here ties follow trec_eval's rule, as for every measure. ir_measures fails (division by zero) on
an empty ranking, which scores 0 here. trec_eval 10's ``unj_K`` is another measure: unjudged over
K (not over the results retrieved), negative grades counting as unjudged.
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register, safe_divide


def compute(ranking: Ranking, k: int | None, rel: int) -> np.ndarray:
    judged = ranking.column(ranking.judged_so_far(), k)
    shown = ranking.retrieved if k is None else np.minimum(ranking.retrieved, k)
    return safe_divide(judged, shown)


MEASURE = register("Judged", compute, __doc__, order=100, whole=True,
                   tools={"ir_measures": ("Judged@K", "Judged")})
