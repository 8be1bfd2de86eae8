"""RPrec: R-Precision, the precision at rank R, R the number of relevant skills (``Rprec``).

    RPrec = |relevant within the top R| / R,   R = |relevant judged|, and 0 when R = 0

There is no cutoff: each query is cut at its own R (1 to 3 for SkillRet), the rank where
precision equals recall. A ranking shorter than R counts as if non-relevant results filled it
(the denominator stays R); an empty ranking scores 0.

Neighbours: trec_eval's and ir_measures' ``Rprec`` are this; ranx's ``r-precision`` too, except
that ranx orders tied scores in no stated order (numba's sort of the scores).
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register, safe_divide


def compute(ranking: Ranking, k: None, rel: int) -> np.ndarray:
    needed = ranking.relevant(rel)
    at_r = np.maximum(needed - 1, 0)[:, None]          # the engine lays out depth >= R
    found = np.take_along_axis(ranking.relevant_so_far(rel), at_r, axis=1)[:, 0]
    return safe_divide(np.where(needed > 0, found, 0), needed)


MEASURE = register("RPrec", compute, __doc__, order=80, cutoff=False, whole=True,
                   tools={"trec_eval": ("Rprec",), "ir_measures": ("Rprec",),
                          "ranx": ("r-precision",)})
