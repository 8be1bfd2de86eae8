"""The Python API: ``evaluate``, ``per_query`` and ``trec_eval``, SkillRet's drop-in."""

from __future__ import annotations

from numbers import Integral
from typing import Iterable

from skillret.scoring.aggregate import aggregate
from skillret.errors import ConfigError
from skillret.measures import registry
from skillret.scoring.names import MAX_CUTOFF
from skillret.scoring.profiles import RUN_JUDGED, Profile
from skillret.scoring.evaluator import evaluate_run, score


def evaluate(qrels, run, profile: str | Profile = "official", *,
             relevance_level: int | None = None, define: dict | None = None) -> dict[str, float]:
    """Mean metrics of ``run`` under one profile: ``{"NDCG@5": 0.41, ...}`` in profile order.

    ``qrels``: a path (any supported format), ``{query_id: {skill_id: grade}}`` or a DataFrame
    with query_id, skill_id, relevance. ``run``: a path, ``{query_id: {skill_id: score}}`` or a
    DataFrame with query_id, skill_id, score. ``profile``: a built-in name (official, mia5150,
    recommended), a :class:`~skillret.scoring.profiles.Profile`, or a name defined in ``define``.
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
    1), rounded to 5 decimals with Python's ``round``: the ``official`` profile's arithmetic,
    at these cutoffs. ``k_values`` are integers from 1 to
    :data:`~skillret.scoring.names.MAX_CUTOFF`.
    """
    from skillret.columnar.qrels import Qrels
    from skillret.columnar.runs import Run

    ks = _cutoffs(k_values)
    if not ks:
        return {}
    profile = Profile("trec_eval", tuple(f"{m}@{k}" for m in registry.official_names()
                                         for k in ks), query_set=RUN_JUDGED, rounding=5)
    judgments = Qrels.from_dict(qrels)
    per_query, _ = evaluate_run(judgments, Run.from_dict(results), profile.parsed())
    return aggregate(profile, per_query, judgments)


def _cutoffs(k_values: Iterable[int]) -> list[int]:
    """``k_values`` as distinct cutoffs in their order; anything but an integer in 1..MAX_CUTOFF
    (a float, a bool, a string, 0) is refused rather than truncated."""
    if isinstance(k_values, (str, bytes)) or not isinstance(k_values, Iterable):
        raise ConfigError(f"k_values must be a sequence of integers, not {k_values!r}")
    ks = list(k_values)
    for k in ks:
        if not isinstance(k, Integral) or isinstance(k, bool) or not 1 <= k <= MAX_CUTOFF:
            raise ConfigError(f"k_values: {k!r} is not a cutoff (an integer from 1 to "
                              f"{MAX_CUTOFF:,})")
    return list(dict.fromkeys(int(k) for k in ks))
