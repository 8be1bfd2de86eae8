"""Per-query results (:class:`QueryResults`, what the engine produces), from them to a profile's
numbers (which queries, which arithmetic, what rounding), how a run's queries meet the judged
ones (counts, and the refusal of a run that meets none), and a scored run (:class:`Scores`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.qrels import Qrels
from skillret.errors import Fix, InputError
from skillret.scoring.names import Metric, format_metric
from skillret.scoring.profiles import Profile

@dataclass
class QueryResults:
    """Per-query values for every query of a run, in run order."""

    queries: pa.Array                        # run order, empty rankings included
    judged_index: np.ndarray                 # position among the judged queries, -1 if none
    retrieved: np.ndarray                    # results in the ranking
    values: dict[Metric, np.ndarray]

    @classmethod
    def concat(cls, parts: Sequence["QueryResults"], metrics: Sequence[Metric]
               ) -> "QueryResults":
        if not parts:
            empty = np.zeros(0)
            return cls(pa.nulls(0, pa.string()), empty.astype(np.int64), empty.astype(np.int64),
                       {m: empty for m in metrics})
        return cls(
            pa.concat_arrays([p.queries for p in parts]),
            np.concatenate([p.judged_index for p in parts]),
            np.concatenate([p.retrieved for p in parts]),
            {m: np.concatenate([p.values[m] for p in parts]) for m in metrics},
        )


#: What tells SkillRet's splits apart, for messages about a run and qrels that do not match.
SPLITS = "SkillRet v1.0's test split had 4,997 queries, v1.1 has 4,392"


class QueryCounts(NamedTuple):
    """How the run's queries meet the judged ones."""

    judged: int    # queries with at least one judgment
    in_run: int    # queries the run holds, empty rankings included
    in_both: int   # run queries with judgments: the official evaluator's query set
    missing: int   # judged queries absent from the run
    empty: int     # run queries with an empty ranking
    unjudged: int  # run queries without judgments (ignored by every profile)

    def evaluated(self, profile: Profile) -> int:
        """How many queries the profile's means are taken over."""
        return self.in_both if profile.run_queries_only else self.judged


def count_queries(results: QueryResults, qrels: Qrels) -> QueryCounts:
    """The query counts of a scored (or validated) run, the same for every report."""
    judged = int(len(qrels.queries))
    in_run = int(len(results.queries))
    in_both = int((results.judged_index >= 0).sum())
    return QueryCounts(judged, in_run, in_both, judged - in_both,
                       int((results.retrieved == 0).sum()), in_run - in_both)


def check_overlap(qrels: Qrels, results: QueryResults, run_source: str | None) -> None:
    """Refuse a run that shares no query with the qrels: almost always the wrong split."""
    if not len(qrels.queries) or (results.judged_index >= 0).any():
        return
    if not len(results.queries):
        raise InputError(run_source, "no query in common with the qrels: the run holds no "
                                     "rankings")
    # query ids that are skill ids of the qrels: the sign of swapped columns
    found = pc.is_in(results.queries, value_set=pc.unique(qrels.skill_id))
    if pc.sum(found).as_py():
        raise InputError(
            run_source,
            f"no query in common with the qrels, and {pc.sum(found).as_py():,} of the run's "
            f"{len(results.queries):,} query ids are skill ids of the qrels (e.g. "
            f"{results.queries.filter(found)[0].as_py()!r}): the query and skill id columns "
            f"look swapped, in the run or in the qrels",
            hint="a TREC run is qid Q0 skill_id rank score tag, TREC qrels are qid 0 "
                 "skill_id grade: swap fields 1 and 3 of the one that is not, e.g. "
                 f"awk '{{t=$1; $1=$3; $3=t}} 1' {run_source or 'run.trec'} > fixed.trec; "
                 "in a table, say which column is which: {fix} (the qrels' columns "
                 "likewise)", fix=Fix("--columns", "query=NAME,skill=NAME", "columns"))
    raise InputError(
        run_source,
        f"no query in common with the qrels ({len(results.queries)} run queries, e.g. "
        f"{results.queries[0].as_py()!r}; {len(qrels.queries)} judged, e.g. "
        f"{qrels.queries[0].as_py()!r})",
        hint=f"wrong split or qrels version? {SPLITS}")


def aggregate(profile: Profile, results: QueryResults, qrels: Qrels) -> dict[str, float]:
    """``{"NDCG@10": mean, ...}`` in the profile's order, over its query set, rounded as it says
    (see :func:`profile_mean`)."""
    in_set = results.judged_index >= 0
    n = count_queries(results, qrels).evaluated(profile)
    return {metric.short_name(): profile_mean(profile, results.values[metric][in_set], n)
            for metric in profile.parsed()}


def profile_mean(profile: Profile, values: np.ndarray, count: int) -> float:
    """The mean of per-query ``values`` over ``count`` queries (at least 1), rounded as the
    profile says.

    official (run-judged): ``0.0 + v0 + v1 + ...`` in the given order (the run's), as the
                official evaluator's ``+=`` loop adds, over their count, as SkillRet's
                ``trec_eval`` does after pytrec_eval;
    all-judged: the exactly rounded sum (``math.fsum``) over the number of judged queries:
                queries absent from ``values`` add 0.
    """
    n = max(int(count), 1)
    values = np.asarray(values, dtype=np.float64)
    if profile.run_queries_only and len(values):
        mean = float(np.add.accumulate(values)[-1]) / n
    else:  # also an empty `values`: 0.0
        mean = math.fsum(values.tolist()) / n
    return mean if profile.rounding is None else round(mean, profile.rounding)


@dataclass
class Scores:
    """A scored run: one metrics mapping per profile, query counts, and per-query values."""

    profiles: list[Profile]
    metrics: dict[str, dict[str, float]]
    query_counts: dict                       # judged, in_run, ..., evaluated per profile
    results: QueryResults
    qrels: Qrels
    notices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)   # e.g. swapped score and rank columns

    def to_dict(self) -> dict:
        """``{"<profile>": {"<metric>@<K>": value}, "queries": {...}}``: plain numbers."""
        return {**self.metrics, "queries": self.query_counts}

    def per_query(self, profile: str | Profile | None = None):
        """A DataFrame, one row per query.

        With a profile: the queries of its query set, its metrics as columns. Without: every
        judged query, an ``in_run`` column (the official set is the rows where it is true), and
        every metric of every profile (a level other than 1 is written in the name:
        ``NDCG(rel=2)@10``).
        """
        import pandas as pd  # heavy: kept off the start-up of `score`, which never needs it
        return pd.DataFrame(self.per_query_columns(profile))

    def per_query_columns(self, profile: str | Profile | None = None) -> dict[str, object]:
        """Columns of :meth:`per_query` as arrays, rows sorted by query id."""
        qrels, res = self.qrels, self.results
        n = len(qrels.queries)
        pos = np.full(n, -1, dtype=np.int64)          # row of each judged query in the results
        mask = res.judged_index >= 0
        pos[res.judged_index[mask]] = np.flatnonzero(mask)
        in_run = pos >= 0
        if profile is not None:
            prof = profile if isinstance(profile, Profile) else \
                {p.name: p for p in self.profiles}.get(profile)
            if prof is None:
                raise KeyError(f"profile {profile!r} was not scored (scored: "
                               f"{', '.join(p.name for p in self.profiles)})")
            metrics = prof.parsed()
            levels = [prof.relevance_level]
            rows = np.flatnonzero(in_run) if prof.run_queries_only else np.arange(n)
            names = {m: m.short_name() for m in metrics}
        else:
            metrics = list(dict.fromkeys(m for p in self.profiles for m in p.parsed()))
            levels = sorted({m.rel for m in metrics})
            rows = np.arange(n)
            names = {m: format_metric(m) for m in metrics}
        cols: dict[str, object] = {"query_id": np.array(arrow.take(qrels.queries, rows).to_pylist(),
                                                        dtype=object)}
        if profile is None:
            cols["in_run"] = in_run[rows]
        at = pos[rows]  # -1, a query absent from the run, picks the 0 appended to each column
        cols["retrieved"] = np.append(res.retrieved, 0)[at]
        for level in levels:
            name = "relevant" if level == 1 else f"relevant(rel={level})"
            cols[name] = qrels.relevant_counts(level)[rows]
        for metric in metrics:
            cols[names[metric]] = np.append(res.values[metric], 0.0)[at]
        return cols
