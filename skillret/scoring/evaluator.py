"""Score runs against one set of qrels: `Evaluator(qrels, profiles)`, prepared once, then
`evaluate(run)`, the shape of pytrec_eval's `RelevanceEvaluator(qrels, measures).evaluate(run)`.
"""

from __future__ import annotations

import functools
from typing import Callable, Iterator, Sequence

from skillret.scoring.aggregate import (QueryResults, Scores, aggregate, check_overlap,
                                        count_queries)
from skillret.scoring.engine import Judgments, evaluate_chunk
from skillret.columnar.qrels import Qrels
from skillret.io.readers import open_run, read_qrels
from skillret.scoring.names import Metric
from skillret.scoring.profiles import Profile, resolve_profiles
from skillret.columnar.runs import OpenedRun, RunChunk, consume_chunks
from skillret.scoring.swaps import SwapTally, swap_warning

#: A look at a run's chunks as they are scored: takes them and yields them on, unchanged.
Watch = Callable[[Iterator[RunChunk]], Iterator[RunChunk]]


class Evaluator:
    """`Evaluator(qrels, profiles).evaluate(run)`: scores any number of runs against `qrels`.

    `qrels`: anything `read_qrels` takes (a path in any supported format, a
    `{query_id: {skill_id: grade}}` dict, a DataFrame, `Qrels`). `profiles`: names (built-in or
    defined in `define`) or `Profile` objects. `extra_metrics` are computed per query too.
    `max_results_per_query` bounds a query's ranking (more is an error; default: the limit in
    force, `skillret.limits`).
    """

    def __init__(self, qrels,
                 profiles: Sequence[str | Profile] | str | Profile = "official", *,
                 relevance_level: int | None = None, define: dict | None = None,
                 extra_metrics: Sequence[Metric] = (),
                 max_results_per_query: int | None = None):
        self.profiles: list[Profile] = resolve_profiles(profiles, define=define,
                                                   relevance_level=relevance_level)
        self.metrics: list[Metric] = list(dict.fromkeys(
            [m for p in self.profiles for m in p.parsed()] + list(extra_metrics)))
        self.qrels: Qrels = read_qrels(qrels)
        self.max_results_per_query = max_results_per_query

    @functools.cached_property
    def judgments(self) -> Judgments:
        """The qrels' lookups, built when a first run is read (not by `scores` alone)."""
        return Judgments(self.qrels)

    def evaluate(self, run, *, watch: Watch | None = None) -> Scores:
        """Score `run` (anything `open_run` takes: a path, a dict, a DataFrame, a `Run`, an
        opened `RunSource`) under every profile; `watch`: see `query_results`."""
        run = open_run(run)
        results, notices, swaps = self.query_results(run, watch=watch)
        swapped = swap_warning(swaps, run.source, getattr(run, "fmt", None))
        return self.scores(results, run.source, notices, [swapped] if swapped else [])

    def scores(self, results: QueryResults, source: str | None, notices: list[str] = (),
               warnings: list[str] = ()) -> Scores:
        """Every profile aggregated from per-query `results` holding `metrics`; a run sharing
        no query with the qrels is refused, naming `source`."""
        check_overlap(self.qrels, results, source)
        metrics = {p.name: aggregate(p, results, self.qrels) for p in self.profiles}
        counts = count_queries(results, self.qrels)  # judged, in the run, ..., evaluated
        query_counts = {**counts._asdict(),
                        "evaluated": {p.name: counts.evaluated(p) for p in self.profiles}}
        return Scores(self.profiles, metrics, query_counts, results, self.qrels, list(notices),
                      list(warnings))

    def query_results(self, run: OpenedRun, *, watch: Watch | None = None
                      ) -> tuple[QueryResults, list[str], SwapTally]:
        """Per-query values of the metrics (streamed when the run allows), notices for the
        user, and the signs of swapped score and rank columns.

        `watch(chunks)` yields the chunks on as they are scored; it is called again, from the
        first chunk, when a file whose queries turn out not to be grouped is read again whole."""
        def results(chunks: Iterator[RunChunk]) -> tuple[QueryResults, SwapTally]:
            tally, parts = SwapTally(), []
            for chunk in chunks if watch is None else watch(chunks):
                tally.add(chunk)  # in file order: the ranks' direction is not read
                parts.append(evaluate_chunk(chunk, self.judgments, self.metrics,
                                            source=run.source))
            return QueryResults.concat(parts, self.metrics), tally

        (results, tally), notices = consume_chunks(run, results,
                                                   max_results=self.max_results_per_query)
        return results, notices, tally
