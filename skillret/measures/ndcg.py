"""NDCG@K: normalized discounted cumulative gain at cutoff K (trec_eval's ``ndcg_cut``).

    DCG@K  = sum over ranks r = 1..K of gain(r) / log2(r + 1)
    IDCG@K = the same sum over the query's judged grades sorted descending, cut at K
    NDCG@K = DCG@K / IDCG@K, and 0 when IDCG@K is 0

gain(r) is the grade of the skill at rank r when that grade is positive, else 0: unjudged skills,
grade 0 and negative grades give nothing. Gains use the grades whatever the relevance level, so
the level does not change NDCG (as in trec_eval ``-l``). Sums run in rank order, in double
precision, as trec_eval's loop does.

NDCG, without a cutoff, is trec_eval's ``ndcg``: DCG over the whole ranking, IDCG over every
positive judgment of the query (those the ranking missed included).

Neighbours: ir_measures' ``nDCG@K`` and ``nDCG`` are these (through pytrec_eval). ranx's
``ndcg@K`` counts only grades >= the relevance level as gains, and orders tied scores in no stated
order (numba's sort of the scores); the two agree at level 1 when no tie straddles the cutoff.
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register, safe_divide


def compute(ranking: Ranking, k: int | None, rel: int) -> np.ndarray:
    dcg = ranking.column(ranking.discounted_gain_so_far(), k)
    idcg = ranking.column(ranking.ideal_gain_so_far(), k)
    return safe_divide(dcg, idcg)


MEASURE = register("NDCG", compute, __doc__, order=10, official=True, whole=True, plotted=True,
                   tools={"trec_eval": ("ndcg_cut_K", "ndcg"), "ir_measures": ("nDCG@K", "nDCG"),
                          "ranx": ("ndcg@K", "ndcg")})
