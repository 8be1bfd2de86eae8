"""Bpref: binary preference, how often the ranking puts relevant skills above judged
non-relevant ones (trec_eval's ``bpref``; Buckley and Voorhees, SIGIR 2004).

    Bpref = (1 / R) * sum over relevant results r of
                (1 - min(n_r, R) / min(N, R))   if n_r > 0, else 1

R is the number of relevant judgments (grade >= the level), N the number of judged non-relevant
ones (0 <= grade < the level), and n_r the judged non-relevant results ranked above r. Unjudged
results are skipped, and so are skills judged with a negative grade (trec_eval treats those as
unjudged). There is no cutoff: the whole ranking is read. A query with R = 0 scores 0; relevant
skills the ranking missed add nothing, so they pull Bpref down. The sum runs in rank order, in
double precision, as trec_eval's loop does.

Neighbours: ir_measures' ``Bpref`` is this (through pytrec_eval). ranx's ``bpref`` counts a
negative grade as judged non-relevant, divides by zero when a query has no judged non-relevant
skill, and orders tied scores in no stated order.
"""

from __future__ import annotations

import numpy as np

from skillret.measures.registry import Ranking, register, safe_divide


def compute(ranking: Ranking, k: None, rel: int) -> np.ndarray:
    grades = ranking.grades
    relevant = ranking.relevant(rel)                       # R
    nonrelevant = ranking.relevant(0) - relevant           # N: judged 0 <= grade < level
    above = np.cumsum((grades >= 0) & (grades < rel), axis=1, dtype=np.int64)   # n_r
    kept = np.minimum(above, relevant[:, None]).astype(np.float64)
    share = np.where(above > 0,
                     1.0 - safe_divide(kept, np.minimum(nonrelevant, relevant)[:, None]), 1.0)
    total = ranking.column(np.cumsum(np.where(ranking.is_relevant(rel), share, 0.0), axis=1),
                           None)
    return safe_divide(total, relevant)


MEASURE = register("Bpref", compute, __doc__, order=90, cutoff=False, whole=True,
                   tools={"trec_eval": ("bpref",), "ir_measures": ("Bpref",),
                          "ranx": ("bpref",)})
