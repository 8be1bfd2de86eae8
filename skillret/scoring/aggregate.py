"""From per-query values to a profile's numbers (which queries, which arithmetic, what
rounding), and how a run's queries meet the judged ones (counts, and the refusal of a run that
meets none).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pyarrow.compute as pc

from skillret.columnar.qrels import Qrels
from skillret.errors import Fix, InputError
from skillret.scoring.profiles import Profile
from skillret.scoring.results import QueryResults

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
    if len(qrels.queries) and not len(results.queries):
        raise InputError(run_source, "no query in common with the qrels: the run holds no "
                                     "rankings")
    if len(results.queries) and len(qrels.queries) and not (results.judged_index >= 0).any():
        swapped = _skills_as_queries(qrels, results)
        if swapped is not None:
            raise InputError(
                run_source,
                f"no query in common with the qrels, and {swapped[0]:,} of the run's "
                f"{len(results.queries):,} query ids are skill ids of the qrels (e.g. "
                f"{swapped[1]!r}): the query and skill id columns look swapped, in the run or "
                f"in the qrels",
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


def _skills_as_queries(qrels: Qrels, results: QueryResults) -> tuple[int, str] | None:
    """How many of the run's query ids are skill ids of the qrels, and one of them (None when
    none is): the sign of swapped query and skill columns."""
    found = pc.is_in(results.queries, value_set=pc.unique(qrels.skill_id))
    count = pc.sum(found).as_py() or 0
    if not count:
        return None
    return count, results.queries.filter(found)[0].as_py()


def sequential_sum(values: np.ndarray) -> float:
    """``0.0 + v0 + v1 + ...`` in this order, as the official evaluator's ``+=`` loop adds."""
    if len(values) == 0:
        return 0.0
    return float(np.add.accumulate(np.asarray(values, dtype=np.float64))[-1])


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

    official (run-judged): ``values`` added in the given order (the run's), over their count, as
                SkillRet's ``trec_eval`` does after pytrec_eval;
    all-judged: the exactly rounded sum (``math.fsum``) over the number of judged queries:
                queries absent from ``values`` add 0.
    """
    n = max(int(count), 1)
    if profile.run_queries_only:
        mean = sequential_sum(values) / n
    else:
        mean = math.fsum(np.asarray(values, dtype=np.float64).tolist()) / n
    return mean if profile.rounding is None else round(mean, profile.rounding)


def query_counts(results: QueryResults, qrels: Qrels, profiles: list[Profile]) -> dict:
    """How many queries were judged, in the run, in both, missing, empty, unjudged, evaluated."""
    counts = count_queries(results, qrels)
    return {**counts._asdict(),
            "evaluated": {p.name: counts.evaluated(p) for p in profiles}}
