"""Validation: check a run against the qrels before it is scored, and report what was found.

Errors stop everything (the readers and the engine raise :class:`~skillret.errors.InputError`):
an unreadable, binary or empty file, a wrong column count, a score that is not a finite number,
a skill listed twice for a query, a pair judged twice with different grades, a fractional grade,
malformed JSON or JSON of the wrong shape, no query in common with the qrels.

Warnings are counted in the report and printed; ``strict`` turns them into errors: judged queries
missing from the run, empty rankings, run queries without judgments, rankings shorter than the
largest cutoff, tied scores, a rank column that disagrees with the score order, fields after a
TREC run's tag, identical duplicate judgments, and metrics carried by a SkillRet results file that
the given qrels do not reproduce.

:func:`validate` here takes loaded qrels and an opened run; the public ``skillret.validate``
(:mod:`skillret.api`) takes paths, dicts and DataFrames too, and loads them first.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field, replace
from typing import Iterator, Sequence

import numpy as np

from skillret.io.atomic import atomic_path
from skillret.io.write_runs import CANONICAL_SCHEMA, CanonicalWriter, canonical_table
from skillret.validation.cross_check import carried_metrics, cross_check
from skillret.scoring.engine import evaluate_chunk, rank_chunk
from skillret.errors import ValidationFailed
from skillret.scoring.lookups import Judgments
from skillret.scoring.names import Metric
from skillret.scoring.ordering import trec_scores
from skillret.scoring.results import QueryResults
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import OpenedRun, Run, RunChunk, consume_chunks
from skillret.scoring.swaps import SwapTally, integral_ranks
from skillret.validation.report import WRONG_SPLIT_HINT, add_cross_check, build_report


@dataclass
class _Tally:
    """What the chunks add up to."""

    retrieved: list = field(default_factory=list)
    queries: list = field(default_factory=list)
    judged_index: list = field(default_factory=list)
    tie_pairs: int = 0
    tie_queries: int = 0
    tie_queries_in_depth: int = 0
    first_tie_line: int | None = None
    rank_rows: int = 0
    rank_queries: int = 0
    first_rank_line: int | None = None
    rank_present: bool = False
    extra_fields: int = 0
    results: list = field(default_factory=list)
    scored: list = field(default_factory=list)
    swaps: SwapTally = field(default_factory=SwapTally)


def _tally_chunk(chunk: RunChunk, judgments: Judgments, depth: int, tally: _Tally, source,
                 cross_metrics: list[Metric], metrics: list[Metric] = ()
                 ) -> tuple[np.ndarray | None, np.ndarray]:
    perm, ranks = rank_chunk(chunk, source)
    nq = len(chunk.queries)
    tally.extra_fields += chunk.extra_fields
    tally.queries.append(chunk.queries)
    tally.retrieved.append(np.bincount(chunk.row_query, minlength=nq))
    tally.judged_index.append(judgments.query_index(chunk.queries))
    order = np.arange(len(chunk)) if perm is None else perm
    if len(chunk) > 1:
        q = chunk.row_query[order]
        s = trec_scores(chunk.score[order])  # ties as trec_eval sees them
        tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
        if tie.any():
            tally.tie_pairs += int(tie.sum())
            tally.tie_queries += len(np.unique(q[1:][tie]))
            in_depth = tie & (ranks[:-1] <= depth)
            tally.tie_queries_in_depth += len(np.unique(q[1:][in_depth]))
            if tally.first_tie_line is None and chunk.line is not None:
                tally.first_tie_line = int(chunk.line[order[1:][tie]].min())
    tally.swaps.add(chunk, order)
    if integral_ranks(chunk.rank) is not None:  # a fractional rank column is no rank column
        tally.rank_present = True
        file_rank = integral_ranks(chunk.rank)[order]
        wrong = file_rank != ranks
        if wrong.any():
            tally.rank_rows += int(wrong.sum())
            tally.rank_queries += len(np.unique(chunk.row_query[order][wrong]))
            if tally.first_rank_line is None and chunk.line is not None:
                tally.first_rank_line = int(chunk.line[order][wrong].min())
    if cross_metrics:
        tally.results.append(evaluate_chunk(chunk, judgments, cross_metrics, source=source,
                                            ranked=(perm, ranks)))
    if metrics:
        tally.scored.append(evaluate_chunk(chunk, judgments, metrics, source=source,
                                           ranked=(perm, ranks)))
    return perm, ranks


def validate(qrels: Qrels, run: OpenedRun, *, depth: int = 15, strict: bool = False,
             normalized: str | os.PathLike | None = None,
             max_results_per_query: int | None = None,
             judged_at: Sequence[int] | None = None) -> dict:
    """Check ``run`` (a :class:`~skillret.columnar.runs.Run` or an opened
    :class:`~skillret.io.readers.RunSource`) against loaded ``qrels``; return the report
    (JSON-ready, plain numbers).

    ``normalized``: write the canonical run there (Parquet: query_id, skill_id, score, rank;
    queries in run order, results in tie-rule order; an empty ranking is one row with nulls),
    only when validation passes. A query with more than ``max_results_per_query`` results is an
    error. The report's ``judged`` gives Judged@K (the share of the top K that is judged) at
    each cutoff of ``judged_at`` (default: ``depth``), averaged over the run's judged queries.
    Raises :class:`InputError` on errors and :class:`ValidationFailed` when ``strict`` and there
    are warnings.
    """
    return validate_and_score(qrels, run, depth=depth, strict=strict, normalized=normalized,
                              max_results_per_query=max_results_per_query,
                              judged_at=judged_at)[0]


def validate_and_score(qrels: Qrels, run: OpenedRun, *, metrics: list[Metric] = (),
                       depth: int = 15, strict: bool = False,
                       normalized: str | os.PathLike | None = None,
                       max_results_per_query: int | None = None,
                       judged_at: Sequence[int] | None = None
                       ) -> tuple[dict, QueryResults | None]:
    """:func:`validate`, and the per-query values of ``metrics`` computed in the same pass
    over the run: each chunk, once put in tie-rule order for the canonical run, is scored as
    it is (:func:`~skillret.scoring.engine.evaluate_chunk` with that order), so the values are
    those of scoring the canonical run (the pipeline's ``score@<run>`` did that by reading
    the canonical file back; ``tests/validation/test_one_pass.py`` holds the two equal).
    Returns the report and the :class:`~skillret.scoring.results.QueryResults` (None without
    ``metrics``).
    """
    metrics = list(dict.fromkeys(metrics))
    judged = [Metric("Judged", k) for k in sorted(set(judged_at or (depth,)))]
    scored_metrics = list(dict.fromkeys(metrics + judged))  # one pass computes both
    judgments = Judgments(qrels)
    source = run.source
    opened = not isinstance(run, Run)  # a file (RunSource): its format is reported
    fmt_name = run.fmt if opened else None

    # Metrics a SkillRet results file carries need the document parsed first.
    if opened and not run.in_batches:
        run = run.read(with_rank=True)
    cross_metrics, carried = carried_metrics(run)

    def tally(chunks: Iterator[RunChunk], tmp) -> _Tally:
        """Every chunk checked and counted, and written to ``tmp`` in canonical form."""
        tally = _Tally()
        writer = CanonicalWriter(tmp) if tmp is not None else None
        try:
            for chunk in chunks:
                perm, ranks = _tally_chunk(chunk, judgments, depth, tally, source, cross_metrics,
                                           scored_metrics)
                if writer is not None:
                    writer.write(canonical_table(chunk, perm, ranks))
        finally:
            if writer is not None:
                writer.close()  # an empty run still gets its (empty) file
        return tally

    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(atomic_path(normalized)) if normalized is not None else None
        counted, notices = consume_chunks(run, lambda chunks: tally(chunks, tmp), with_rank=True,
                                          max_results=max_results_per_query)
        every = QueryResults.concat(counted.scored, scored_metrics,
                                    sorted({m.rel for m in scored_metrics}))
        report = build_report(qrels, counted, source, fmt_name, depth, notices,
                              judged_means(every, judged))
        if cross_metrics:
            add_cross_check(report, cross_check(qrels, counted.results, cross_metrics, carried))
        if strict and report["warnings"]:
            raise ValidationFailed(
                f"{source}: {len(report['warnings'])} warning(s) under strict validation: "
                + "; ".join(report["warnings"]), report)
    if not metrics:
        return report, None
    kept = {lvl: every.relevant[lvl] for lvl in sorted({m.rel for m in metrics})}
    return report, replace(every, values={m: every.values[m] for m in metrics}, relevant=kept)


def judged_means(results: QueryResults, metrics: list[Metric]) -> dict[str, float]:
    """``{"Judged@K": mean}`` over the run's judged queries (the official query set), rounded to
    5 decimals as the official profile rounds."""
    from skillret.scoring.aggregate import sequential_sum

    judged = results.judged_index >= 0
    count = max(int(judged.sum()), 1)
    return {m.short_name(): round(sequential_sum(results.values[m][judged]) / count, 5)
            for m in metrics}


__all__ = ["validate", "validate_and_score", "canonical_table", "CANONICAL_SCHEMA",
           "WRONG_SPLIT_HINT"]
