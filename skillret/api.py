"""The Python API. Each function takes a path in any supported format, a pytrec_eval-style dict,
a DataFrame, an Arrow table, a `Run` or an opened `RunSource`."""

from __future__ import annotations

import os
from numbers import Integral
from typing import Iterable, Mapping, Sequence

import numpy as np

from skillret.analysis import fusion
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import Run
from skillret.scoring.aggregate import Scores, aggregate
from skillret.errors import ConfigError
from skillret.io.per_query import PerQuery
from skillret.io.readers import open_run, read_qrels
from skillret.measures import registry
from skillret.scoring.names import MAX_CUTOFF, Metric
from skillret.scoring.profiles import ALL_JUDGED, RUN_JUDGED, Profile, metric_profiles
from skillret.scoring.evaluator import Evaluator, Watch
from skillret.validation import checks


def score(qrels, run, profiles: Sequence[str | Profile] | str | Profile = "official", *,
          relevance_level: int | None = None, define: dict | None = None,
          extra_metrics: Sequence[Metric] = (),
          max_results_per_query: int | None = None) -> Scores:
    """Score `run` against `qrels` under `profiles`; a run path or `RunSource` is streamed when
    possible."""
    return Evaluator(qrels, profiles, relevance_level=relevance_level, define=define,
                     extra_metrics=extra_metrics,
                     max_results_per_query=max_results_per_query).evaluate(run)


def validate(qrels, run, *, depth: int = 15, strict: bool = False,
             normalized: str | os.PathLike | None = None, fmt: str | None = None,
             split: str | None = None, columns: dict | None = None,
             max_results_per_query: int | None = None) -> dict:
    """Check `run` against `qrels`; return the report (JSON-ready). `normalized`: the canonical
    run's Parquet, written when validation passes. Raises `InputError` on errors and
    `ValidationFailed` when `strict` and there are warnings."""
    loaded = read_qrels(qrels)
    return checks.validate_and_score(loaded, open_run(run, fmt=fmt, split=split, columns=columns),
                                     depth=depth, strict=strict, normalized=normalized,
                                     max_results_per_query=max_results_per_query)[0]


def fuse(runs, *, method: str = "rrf", k: float = fusion.DEFAULT_K, norm: str | None = None,
         weights: Mapping[str, float] | None = None, depth: int = fusion.DEFAULT_DEPTH) -> Run:
    """Fuse `{name: run}` or a list of runs (paths named by file stem) in memory into a
    `skillret.Run` with its rank column; methods, norms and tie rule: `skillret.analysis.fusion`."""
    how = fusion.Fusion(method, k, norm, dict(weights or {}), depth)
    names, values = fusion.run_names(runs)
    how.weight_vector(names)
    return fusion.fused_run(how, {n: open_run(v) for n, v in zip(names, values)})


def per_query_values(qrels, run, metrics: list[str], source: str, *,
                     watch: Watch | None = None) -> PerQuery:
    """`metrics` of `run` per judged query (a query missing from the run scores 0), the values
    the pipeline's per-query tables hold. `watch`: see `Evaluator.query_results`."""
    profiles = metric_profiles(metrics, query_set=ALL_JUDGED, rounding=None, name="compare")
    scores = Evaluator(qrels, profiles).evaluate(run, watch=watch)
    columns = scores.per_query_columns()
    return PerQuery(np.asarray(columns["query_id"]).astype(str),
                    {m: np.asarray(columns[m], dtype=np.float64) for m in metrics}, source)


def evaluate(qrels, run, profile: str | Profile = "official", *,
             relevance_level: int | None = None, define: dict | None = None) -> dict[str, float]:
    """Mean metrics of `run` under one profile (a built-in name, a `Profile`, or a name defined
    in `define`): `{"NDCG@5": 0.41, ...}` in profile order."""
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
    """A drop-in for SkillRet's official `trec_eval(qrels, results, k_values)`: the same keys in
    the same order, the same values (the mean over the run's judged queries, rounded to 5)."""
    if isinstance(k_values, (str, bytes)) or not isinstance(k_values, Iterable):
        raise ConfigError(f"k_values must be a sequence of integers, not {k_values!r}")
    ks = list(k_values)
    for k in ks:  # a float, bool, string or 0 is refused, not truncated
        if not isinstance(k, Integral) or isinstance(k, bool) or not 1 <= k <= MAX_CUTOFF:
            raise ConfigError(f"k_values: {k!r} is not a cutoff (an integer from 1 to "
                              f"{MAX_CUTOFF:,})")
    ks = list(dict.fromkeys(int(k) for k in ks))  # distinct, in order
    if not ks:
        return {}
    profile = Profile("trec_eval", tuple(f"{m}@{k}" for m in registry.names("official")
                                         for k in ks), query_set=RUN_JUDGED, rounding=5)
    judgments = Qrels.from_dict(qrels)
    per_query = Evaluator(judgments, [profile]).query_results(Run.from_dict(results))[0]
    return aggregate(profile, per_query, judgments)
