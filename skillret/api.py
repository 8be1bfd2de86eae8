"""The Python API: ``evaluate``, ``per_query`` and ``trec_eval``, SkillRet's drop-in."""

from __future__ import annotations

from typing import Iterable

from .aggregate import sequential_sum
from .names import Metric
from .profiles import Profile
from .scoring import evaluate_run, score

OFFICIAL_MEASURES = ("NDCG", "MAP", "Recall", "Precision", "Completeness")


def evaluate(qrels, run, profile: str | Profile = "official", *,
             relevance_level: int | None = None, define: dict | None = None) -> dict[str, float]:
    """Mean metrics of ``run`` under one profile: ``{"NDCG@5": 0.41, ...}`` in profile order.

    ``qrels``: a path (any supported format), ``{query_id: {skill_id: grade}}`` or a DataFrame
    with query_id, skill_id, relevance. ``run``: a path, ``{query_id: {skill_id: score}}`` or a
    DataFrame with query_id, skill_id, score. ``profile``: a built-in name (official, mia5150,
    recommended), a :class:`~skillret.profiles.Profile`, or a name defined in ``define``.
    """
    scores = score(qrels, run, [profile], relevance_level=relevance_level, define=define)
    return next(iter(scores.metrics.values()))


def per_query(qrels, run, profile: str | Profile = "official", *,
              relevance_level: int | None = None, define: dict | None = None):
    """A DataFrame with one row per query of the profile's query set: query_id, retrieved,
    relevant, then every metric of the profile (unrounded)."""
    scores = score(qrels, run, [profile], relevance_level=relevance_level, define=define)
    return scores.per_query(scores.profiles[0])


def trec_eval(qrels: dict, results: dict, k_values: Iterable[int] = (5, 10, 15)
              ) -> dict[str, float]:
    """A drop-in for SkillRet's official ``trec_eval(qrels, results, k_values)``.

    Same keys in the same order (NDCG@k..., MAP@k..., Recall@k..., Precision@k...,
    Completeness@k...), same values: the mean over the queries pytrec_eval returns (run queries
    with at least one judgment), added in the run's order, divided by their number (at least
    1), rounded to 5 decimals with Python's ``round``.
    """
    from .judgments import Qrels
    from .runs import Run

    ks = list(dict.fromkeys(int(k) for k in k_values))
    metrics = [Metric(m, k) for m in OFFICIAL_MEASURES for k in ks]
    judged = Qrels.from_dict(qrels)
    results_ = evaluate_run(judged, Run.from_dict(results), metrics)[0]
    in_set = results_.judged_index >= 0
    n = max(int(in_set.sum()), 1)
    return {f"{m.measure}@{m.k}": round(sequential_sum(results_.values[m][in_set]) / n, 5)
            for m in metrics}
