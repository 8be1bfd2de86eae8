"""The Python API: `evaluate`, `per_query`, `trec_eval` (SkillRet's drop-in), `score`,
`Evaluator`, `validate` and `fuse`. Each takes anything a user has (a path in any supported
format, a pytrec_eval-style dict, a DataFrame, an Arrow table, a `Run`, an opened `RunSource`).
"""

from __future__ import annotations

import os
from numbers import Integral
from typing import Iterable, Mapping, Sequence

import numpy as np

from skillret.analysis import fusion
from skillret.analysis.fusion import DEFAULT_DEPTH, DEFAULT_K
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import Run
from skillret.scoring.aggregate import aggregate
from skillret.errors import ConfigError
from skillret.io.per_query import PerQuery
from skillret.io.readers import RunSource, open_run, read_qrels
from skillret.measures import registry
from skillret.scoring.names import MAX_CUTOFF, Metric, parse_metric
from skillret.scoring.profiles import ALL_JUDGED, RUN_JUDGED, Profile
from skillret.scoring.evaluator import Evaluator, Watch, evaluate_run
from skillret.scoring.scores import Scores
from skillret.validation import checks


def score(qrels, run, profiles: Sequence[str | Profile] | str | Profile = "official", *,
          relevance_level: int | None = None, define: dict | None = None,
          extra_metrics: Sequence[Metric] = (),
          max_results_per_query: int | None = None) -> Scores:
    """Score `run` against `qrels` under `profiles`: `Evaluator(...).evaluate(run)`.

    `qrels` and `run` may be paths, pytrec_eval-style dicts, DataFrames, or loaded
    objects; a run path (or `RunSource`) is streamed when possible.
    """
    return Evaluator(qrels, profiles, relevance_level=relevance_level, define=define,
                     extra_metrics=extra_metrics,
                     max_results_per_query=max_results_per_query).evaluate(run)


def validate(qrels, run, *, depth: int = 15, strict: bool = False,
             normalized: str | os.PathLike | None = None, fmt: str | None = None,
             split: str | None = None, columns: dict | None = None,
             max_results_per_query: int | None = None) -> dict:
    """Check `run` against `qrels`; return the report (JSON-ready, plain numbers).

    `qrels` and `run`: anything `score` takes; `fmt`, `split` and `columns` say
    how to read a run file. `normalized`: write the canonical run there (Parquet: query_id,
    skill_id, score, rank; queries in run order, results in tie-rule order; an empty ranking is
    one row with nulls), only when validation passes. A query with more than
    `max_results_per_query` results is an error. Raises `InputError` on errors and
    `ValidationFailed` when `strict` and there are warnings.
    """
    loaded = read_qrels(qrels)
    opened = open_run(run, fmt=fmt, split=split, columns=columns)
    return checks.validate(loaded, opened, depth=depth, strict=strict, normalized=normalized,
                           max_results_per_query=max_results_per_query)


def fuse(runs, *, method: str = "rrf", k: float = DEFAULT_K, norm: str | None = None,
         weights: Mapping[str, float] | None = None, depth: int = DEFAULT_DEPTH) -> Run:
    """Fuse runs in memory; returns a `skillret.Run` (with its rank column).

    `runs`: `{name: run}` or a list of runs; a run is a path (any readable format), an
    opened `RunSource`, a `{query: {skill: score}}` dict (or
    anything else `json.load` gives that `skillret.open_run` takes) or a
    `skillret.Run`. Paths are named by file stem.
    The methods, norms and tie rule: `skillret.analysis.fusion`.

        >>> skillret.fuse(["bm25.trec", "dense.trec"], method="rrf")
    """
    how = fusion.Fusion(method, k, norm, dict(weights or {}), depth)
    names, values = fusion.run_names(runs)
    how.weight_vector(names)
    return fusion.fused_run(how, {n: _run_to_fuse(v) for n, v in zip(names, values)})


def _run_to_fuse(run) -> Run:
    """A run to fuse, loaded: a path or an opened run file (read whole, held to the per-query
    limit a streamed run has), a Run, or what `json.load` gives (a TypeError for anything
    else)."""
    if isinstance(run, (str, os.PathLike, RunSource)):
        return open_run(run).read().check_results()
    return open_run(run)


def per_query_values(qrels, run, metrics: list[str], source: str, *,
                     watch: Watch | None = None) -> PerQuery:
    """The per-query table of `run` for a comparison (`skillret.analysis.compare`):
    `metrics` over every judged query, a query missing from the run scoring 0.

    `Scores.per_query_columns()` is the table the pipeline writes, so run files and pipeline
    tables give the same values. `qrels` and `run`: anything `score` takes (a run
    file is streamed when it allows). `watch`: a look at the run's chunks as they are scored
    (`Evaluator.query_results`), e.g. to keep their rows.
    """
    parsed = [parse_metric(m) for m in metrics]
    levels = sorted({m.rel for m in parsed})
    profiles = [Profile(f"compare-rel{level}",
                        tuple(m.short_name() for m in parsed if m.rel == level),
                        query_set=ALL_JUDGED, relevance_level=level) for level in levels]
    scores = Evaluator(qrels, profiles).evaluate(run, watch=watch)
    columns = scores.per_query_columns()
    return PerQuery(np.asarray(columns["query_id"]).astype(str),
                    {m: np.asarray(columns[m], dtype=np.float64) for m in metrics}, source)


def evaluate(qrels, run, profile: str | Profile = "official", *,
             relevance_level: int | None = None, define: dict | None = None) -> dict[str, float]:
    """Mean metrics of `run` under one profile: `{"NDCG@5": 0.41, ...}` in profile order.

    `qrels`: a path (any supported format), `{query_id: {skill_id: grade}}` or a DataFrame
    with query_id, skill_id, relevance. `run`: a path, `{query_id: {skill_id: score}}` or a
    DataFrame with query_id, skill_id, score. `profile`: a built-in name (official, mia5150,
    recommended), a `Profile`, or a name defined in `define`.
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
    """A drop-in for SkillRet's official `trec_eval(qrels, results, k_values)`.

    Same keys in the same order (NDCG@k..., MAP@k..., Recall@k..., Precision@k...,
    Completeness@k...), same values: the mean over the queries pytrec_eval returns (run queries
    with at least one judgment), added in the run's order, divided by their number (at least
    1), rounded to 5 decimals with Python's `round`: the `official` profile's arithmetic,
    at these cutoffs. `k_values` are integers from 1 to
    `MAX_CUTOFF`.
    """
    ks = _cutoffs(k_values)
    if not ks:
        return {}
    profile = Profile("trec_eval", tuple(f"{m}@{k}" for m in registry.official_names()
                                         for k in ks), query_set=RUN_JUDGED, rounding=5)
    judgments = Qrels.from_dict(qrels)
    per_query, _ = evaluate_run(judgments, Run.from_dict(results), profile.parsed())
    return aggregate(profile, per_query, judgments)


def _cutoffs(k_values: Iterable[int]) -> list[int]:
    """`k_values` as distinct cutoffs in their order; anything but an integer in 1..MAX_CUTOFF
    (a float, a bool, a string, 0) is refused rather than truncated."""
    if isinstance(k_values, (str, bytes)) or not isinstance(k_values, Iterable):
        raise ConfigError(f"k_values must be a sequence of integers, not {k_values!r}")
    ks = list(k_values)
    for k in ks:
        if not isinstance(k, Integral) or isinstance(k, bool) or not 1 <= k <= MAX_CUTOFF:
            raise ConfigError(f"k_values: {k!r} is not a cutoff (an integer from 1 to "
                              f"{MAX_CUTOFF:,})")
    return list(dict.fromkeys(int(k) for k in ks))
