"""Score runs against one set of qrels: :class:`Evaluator`, prepared once, then ``evaluate(run)``.

The shape users know from pytrec_eval (``RelevanceEvaluator(qrels, measures).evaluate(run)``) and
ir_measures (``evaluator(measures, qrels)``): the qrels are read and their lookups prepared once;
each run is read the cheapest correct way (streamed when it is a query-contiguous TREC or Parquet
file, in memory otherwise), its per-query values computed for the union of the profiles' metrics
in one pass, and each profile aggregated.
"""

from __future__ import annotations

import contextlib
from typing import Sequence

from skillret.scoring.aggregate import aggregate, query_counts
from skillret.scoring.engine import QueryResults, evaluate_chunks
from skillret.errors import InputError
from skillret.io.readers import RunSource, open_run, read_qrels
from skillret.columnar.qrels import Qrels
from skillret.scoring.lookups import Judgments
from skillret.scoring.names import Metric
from skillret.scoring.profiles import Profile, resolve_profiles
from skillret.columnar.runs import NotGrouped, Run
from skillret.scoring.scores import Scores

#: What tells SkillRet's splits apart, for messages about a run and qrels that do not match.
SPLITS = "SkillRet v1.0's test split had 4,997 queries, v1.1 has 4,392"


class Evaluator:
    """``Evaluator(qrels, profiles).evaluate(run)``: scores any number of runs against ``qrels``.

    ``qrels``: a path (any supported format), a ``{query_id: {skill_id: grade}}`` dict, a
    DataFrame or a :class:`~skillret.columnar.qrels.Qrels`. ``profiles``: names (built-in or defined
    in ``define``) or :class:`~skillret.scoring.profiles.Profile` objects. ``extra_metrics`` are computed
    per query too. ``max_results_per_query`` bounds a query's ranking (more is an error; default:
    the limit in force, :mod:`skillret.limits`).
    """

    def __init__(self, qrels, profiles: Sequence[str | Profile] | str | Profile = "official", *,
                 relevance_level: int | None = None, define: dict | None = None,
                 extra_metrics: Sequence[Metric] = (),
                 max_results_per_query: int | None = None):
        if isinstance(profiles, (str, Profile)):
            profiles = [profiles]
        names = [p for p in profiles if isinstance(p, str)]
        resolved = iter(resolve_profiles(names, define=define, relevance_level=relevance_level)
                        if names else [])
        self.profiles: list[Profile] = [p if isinstance(p, Profile) else next(resolved)
                                        for p in profiles]
        self.metrics: list[Metric] = list(dict.fromkeys(
            [m for p in self.profiles for m in p.parsed()] + list(extra_metrics)))
        self.qrels: Qrels = read_qrels(qrels)
        self.judgments = Judgments(self.qrels)
        self.max_results_per_query = max_results_per_query

    def evaluate(self, run) -> Scores:
        """Score ``run`` (a path, a dict, a DataFrame, a :class:`~skillret.columnar.runs.Run` or an
        opened :class:`~skillret.io.RunSource`) under every profile."""
        run = open_run(run)
        results, notices = self.query_results(run)
        check_overlap(self.qrels, results, run.source)
        metrics = {p.name: aggregate(p, results, self.qrels) for p in self.profiles}
        return Scores(self.profiles, metrics, query_counts(results, self.qrels, self.profiles),
                      results, self.qrels, notices)

    def query_results(self, run: Run | RunSource) -> tuple[QueryResults, list[str]]:
        """Per-query values of the metrics, and notices for the user."""
        try:
            return self._results(run), []
        except NotGrouped as not_grouped:  # a TREC or Parquet file, found out as it was read
            return self._results(run.read()), [not_grouped_notice(run, not_grouped)]

    def _results(self, run: Run | RunSource) -> QueryResults:
        with contextlib.closing(run.chunks(max_results=self.max_results_per_query)) as chunks:
            return evaluate_chunks(chunks, self.judgments, self.metrics, source=run.source)


def not_grouped_notice(run: RunSource, why: NotGrouped) -> str:
    """What the user is told when a run file is read whole because its queries are not
    grouped: why, and how to group it so that it is streamed."""
    path = run.source
    if run.fmt == "parquet":
        grouping = "write it with each query's rows together (stably sorted by query id)"
    elif path.lower().endswith(".gz"):
        grouping = f"zcat {path} | sort -k1,1 -s | gzip > sorted.trec.gz"
    else:
        grouping = f"sort -k1,1 -s {path} > sorted.trec"
    return (f"{path}: {why}, so the run was read into memory instead of streamed; to stream "
            f"it, group it by query first: {grouping}")


def evaluate_run(qrels: Qrels, run: Run | RunSource,
                 metrics: Sequence[Metric]) -> tuple[QueryResults, list[str]]:
    """Per-query values of ``metrics`` (streamed when the run allows), and notices."""
    return Evaluator(qrels, [], extra_metrics=metrics).query_results(run)


def check_overlap(qrels: Qrels, results: QueryResults, run_source: str | None) -> None:
    """Refuse a run that shares no query with the qrels: almost always the wrong split."""
    if len(qrels.queries) and not len(results.queries):
        raise InputError(run_source, "no query in common with the qrels: the run holds no "
                                     "rankings")
    if len(results.queries) and len(qrels.queries) and not (results.judged_index >= 0).any():
        raise InputError(
            run_source,
            f"no query in common with the qrels ({len(results.queries)} run queries, e.g. "
            f"{results.queries[0].as_py()!r}; {len(qrels.queries)} judged, e.g. "
            f"{qrels.queries[0].as_py()!r})",
            hint=f"wrong split or qrels version? {SPLITS}")


def score(qrels, run, profiles: Sequence[str | Profile] | str | Profile = "official", *,
          relevance_level: int | None = None, define: dict | None = None,
          extra_metrics: Sequence[Metric] = (),
          max_results_per_query: int | None = None) -> Scores:
    """Score ``run`` against ``qrels`` under ``profiles``: ``Evaluator(...).evaluate(run)``.

    ``qrels`` and ``run`` may be paths, pytrec_eval-style dicts, DataFrames, or loaded
    objects; a run path (or :class:`~skillret.io.RunSource`) is streamed when possible.
    """
    return Evaluator(qrels, profiles, relevance_level=relevance_level, define=define,
                     extra_metrics=extra_metrics,
                     max_results_per_query=max_results_per_query).evaluate(run)


__all__ = ["Evaluator", "score", "evaluate_run", "check_overlap"]
