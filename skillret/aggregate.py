"""From per-query values to a profile's numbers: which queries, which arithmetic, what rounding.

Aggregation is a separate step from per-query scoring (as in ir_measures): the same per-query
values serve every profile that shares a relevance level.
"""

from __future__ import annotations

import math

import numpy as np

from .engine import QueryResults
from .judgments import Qrels
from .profiles import Profile


def sequential_sum(values: np.ndarray) -> float:
    """``0.0 + v0 + v1 + ...`` in this order, as the official evaluator's ``+=`` loop adds."""
    if len(values) == 0:
        return 0.0
    return float(np.add.accumulate(np.asarray(values, dtype=np.float64))[-1])


def evaluated_count(profile: Profile, results: QueryResults, qrels: Qrels) -> int:
    if profile.query_set == "official":
        return int((results.judged_index >= 0).sum())
    return int(len(qrels.queries))


def aggregate(profile: Profile, results: QueryResults, qrels: Qrels) -> dict[str, float]:
    """``{"NDCG@10": mean, ...}`` in the profile's order, over its query set, rounded as it says.

    official:   per-query values of the run's judged queries, added in run order, over their
                count (at least 1), as SkillRet's ``trec_eval`` does after pytrec_eval;
    all-judged: the exactly rounded sum (``math.fsum``) over the run's judged queries, over the
                number of judged queries: absent ones add 0.
    """
    in_set = results.judged_index >= 0
    n = max(evaluated_count(profile, results, qrels), 1)
    out: dict[str, float] = {}
    for metric in profile.parsed():
        values = results.values[metric][in_set]
        if profile.query_set == "official":
            mean = sequential_sum(values) / n
        else:
            mean = math.fsum(values.tolist()) / n
        rounded = mean if profile.rounding is None else round(mean, profile.rounding)
        out[metric.short_name()] = rounded
    return out


def query_counts(results: QueryResults, qrels: Qrels, profiles: list[Profile]) -> dict:
    """How many queries were judged, in the run, in both, missing, empty, unjudged, evaluated."""
    judged = int(len(qrels.queries))
    in_run = int(len(results.queries))
    in_both = int((results.judged_index >= 0).sum())
    return {
        "judged": judged,
        "in_run": in_run,
        "in_both": in_both,
        "missing": judged - in_both,
        "empty": int((results.retrieved == 0).sum()),
        "unjudged": in_run - in_both,
        "evaluated": {p.name: evaluated_count(p, results, qrels) for p in profiles},
    }
