"""Validation: check a run against the qrels before it is scored, and report what was found.

Errors (:class:`~skillret.errors.InputError`, raised by the readers and the engine) stop
everything. Warnings are counted in the report and printed; ``strict`` turns them into errors:
missing, empty or unjudged queries, short rankings, ties, a rank column that disagrees with the
scores, fields after a TREC run's tag, duplicate judgments, and carried metrics that the qrels do
not reproduce.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field, replace
from typing import Iterator, Sequence

import numpy as np

from skillret.io.atomic import atomic_path
from skillret.io.write_runs import CanonicalWriter, canonical_table
from skillret.scoring.aggregate import QueryResults, aggregate
from skillret.scoring.engine import Judgments, check_unique, evaluate_chunk
from skillret.errors import ValidationFailed
from skillret.scoring.names import Metric
from skillret.scoring.ordering import rank_order, trec_scores
from skillret.scoring.profiles import Profile
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import OpenedRun, Run, RunChunk, consume_chunks
from skillret.scoring.swaps import SwapTally, integral_ranks
from skillret.validation.report import add_cross_check, build_report, carried_metrics


@dataclass
class _Tally:
    """What the chunks add up to."""

    tie_pairs: int = 0
    tie_queries: int = 0
    tie_queries_in_depth: int = 0
    first_tie_line: int | None = None
    rank_rows: int = 0
    rank_queries: int = 0
    first_rank_line: int | None = None
    rank_present: bool = False
    extra_fields: int = 0
    scored: list = field(default_factory=list)
    swaps: SwapTally = field(default_factory=SwapTally)


def _tally_chunk(chunk: RunChunk, judgments: Judgments, depth: int, tally: _Tally, source,
                 metrics: list[Metric]) -> tuple[np.ndarray | None, np.ndarray]:
    check_unique(chunk, source)
    perm, ranks = rank_order(chunk.row_query, chunk.score, chunk.skill_id)
    tally.extra_fields += chunk.extra_fields
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
    file_rank = integral_ranks(chunk.rank)  # a fractional rank column is no rank column
    if file_rank is not None:
        tally.rank_present = True
        wrong = file_rank[order] != ranks
        if wrong.any():
            tally.rank_rows += int(wrong.sum())
            tally.rank_queries += len(np.unique(chunk.row_query[order][wrong]))
            if tally.first_rank_line is None and chunk.line is not None:
                tally.first_rank_line = int(chunk.line[order][wrong].min())
    tally.scored.append(evaluate_chunk(chunk, judgments, metrics, source=source,
                                       ranked=(perm, ranks)))
    return perm, ranks


def validate_and_score(qrels: Qrels, run: OpenedRun, *, metrics: list[Metric] = (),
                       depth: int = 15, strict: bool = False,
                       normalized: str | os.PathLike | None = None,
                       max_results_per_query: int | None = None,
                       judged_at: Sequence[int] | None = None
                       ) -> tuple[dict, QueryResults | None]:
    """Check ``run`` (a ``Run`` or an opened ``RunSource``) against loaded ``qrels``; return the
    report (JSON-ready) and the per-query values of ``metrics`` (None without), computed in the
    same pass: each chunk is scored in the tie-rule order it is written to the canonical run in,
    so the values are those of scoring the canonical run. ``normalized``: the canonical run's
    Parquet, written only when validation passes. The report's ``judged`` gives Judged@K at each
    cutoff of ``judged_at`` (default: ``depth``). Raises :class:`InputError` on errors and
    :class:`ValidationFailed` when ``strict`` and there are warnings.
    """
    metrics = list(dict.fromkeys(metrics))
    judged = [Metric("Judged", k) for k in sorted(set(judged_at or (depth,)))]
    judgments = Judgments(qrels)
    source = run.source
    opened = not isinstance(run, Run)  # a file (RunSource): its format is reported
    fmt_name = run.fmt if opened else None

    # Metrics a SkillRet results file carries need the document parsed first.
    if opened and not run.in_batches:
        run = run.read(with_rank=True)
    cross_metrics, carried = carried_metrics(run)
    scored_metrics = list(dict.fromkeys(metrics + judged + cross_metrics))  # one pass for all

    def tally(chunks: Iterator[RunChunk], tmp) -> _Tally:
        """Every chunk checked and counted, and written to ``tmp`` in canonical form (an empty
        run still gets its empty file)."""
        tally = _Tally()
        with contextlib.closing(CanonicalWriter(tmp)) if tmp is not None \
                else contextlib.nullcontext() as writer:
            for chunk in chunks:
                perm, ranks = _tally_chunk(chunk, judgments, depth, tally, source, scored_metrics)
                if writer is not None:
                    writer.write(canonical_table(chunk, perm, ranks))
        return tally

    with atomic_path(normalized) if normalized is not None else contextlib.nullcontext() as tmp:
        counted, notices = consume_chunks(run, lambda chunks: tally(chunks, tmp), with_rank=True,
                                          max_results=max_results_per_query)
        every = QueryResults.concat(counted.scored, scored_metrics)
        # Judged@K over the official query set, rounded as it is
        means = aggregate(Profile("judged", tuple(m.short_name() for m in judged)), every, qrels)
        report = build_report(qrels, counted, every, source, fmt_name, depth, notices, means)
        if cross_metrics:
            add_cross_check(report, qrels, every, cross_metrics, carried)
        if strict and report["warnings"]:
            raise ValidationFailed(
                f"{source}: {len(report['warnings'])} warning(s) under strict validation: "
                + "; ".join(report["warnings"]), report)
    if not metrics:
        return report, None
    return report, replace(every, values={m: every.values[m] for m in metrics})
