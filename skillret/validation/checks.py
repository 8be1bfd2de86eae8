"""Validation: check a run against the qrels before it is scored, and report what was found
(counts, warnings and their wording; the metrics a SkillRet results file carries, recomputed).

Errors (:class:`~skillret.errors.InputError`, raised by the readers and the engine) stop
everything. Warnings are counted in the report and printed; ``strict`` turns them into errors:
missing, empty or unjudged queries, short rankings, ties, a rank column that disagrees with the
scores, fields after a TREC run's tag, duplicate judgments, and carried metrics that the qrels do
not reproduce.
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass, field, replace
from typing import Iterator, Sequence

import numpy as np

from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import OpenedRun, RunChunk, consume_chunks
from skillret.errors import ConfigError, ValidationFailed
from skillret.io.atomic import atomic_path
from skillret.io.write_runs import CanonicalWriter, canonical_table
from skillret.scoring.aggregate import SPLITS, QueryResults, aggregate, check_overlap, count_queries
from skillret.scoring.engine import Judgments, check_unique, evaluate_chunk
from skillret.scoring.names import Metric, parse_metric
from skillret.scoring.ordering import rank_order, trec_scores
from skillret.scoring.profiles import RUN_JUDGED, Profile
from skillret.scoring.swaps import SwapTally, integral_ranks, swap_warning

WRONG_SPLIT_HINT = f"a different qrels version or split? {SPLITS}"


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
    fmt_name = getattr(run, "fmt", None)  # a file (RunSource): its format is reported

    # Metrics a SkillRet results file carries need the document parsed first.
    if fmt_name is not None and not run.in_batches:
        run = run.read(with_rank=True)
    cross_metrics, carried = [], {}  # those naming a metric we know, and their values
    for name, value in ((getattr(run, "metadata", None) or {}).get("metrics") or {}).items():
        with contextlib.suppress(ConfigError):
            cross_metrics.append(parse_metric(name))
            carried[cross_metrics[-1].short_name()] = value
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
            add_cross_check(report, qrels, every, carried)
        if strict and report["warnings"]:
            raise ValidationFailed(
                f"{source}: {len(report['warnings'])} warning(s) under strict validation: "
                + "; ".join(report["warnings"]), report)
    if not metrics:
        return report, None
    return report, replace(every, values={m: every.values[m] for m in metrics})


def build_report(qrels: Qrels, tally, results: QueryResults, source, fmt_name, depth, notices,
                 judged: dict[str, float]) -> dict:
    """The report of a run's tally and per-query `results` (its ``cross_check`` is added by
    :func:`add_cross_check`); ``judged``: Judged@K at the cutoffs in use."""
    check_overlap(qrels, results, source)
    counts = count_queries(results, qrels)
    queries, judged_index, retrieved = results.queries, results.judged_index, results.retrieved
    nonempty = retrieved[retrieved > 0]
    shallow = int(((retrieved > 0) & (retrieved < depth)).sum())
    where = source or "<run>"
    warnings: list[str] = []

    def warn(text, line=None):
        warnings.append(f"{where}{'' if line is None else f':{line}'}: {text}")

    def example(ids, mask):
        return ids[int(np.flatnonzero(mask)[0])].as_py()

    if counts.missing:
        absent = ~np.isin(np.arange(counts.judged), judged_index)
        warn(f"{counts.missing} judged quer{'y is' if counts.missing == 1 else 'ies are'} missing "
             f"from the run (e.g. {example(qrels.queries, absent)!r}); the official profile "
             f"ignores them, all-judged profiles score them 0")
    if counts.empty:
        warn(f"{counts.empty} quer{'y has' if counts.empty == 1 else 'ies have'} an empty ranking "
             f"(e.g. {example(queries, retrieved == 0)!r}); they score 0")
    if counts.unjudged:
        one = counts.unjudged == 1
        warn(f"{counts.unjudged} run quer{'y has' if one else 'ies have'} no judgments "
             f"(e.g. {example(queries, judged_index < 0)!r}) and {'is' if one else 'are'} "
             f"ignored")
    if shallow:
        warn(f"{shallow} quer{'y retrieves' if shallow == 1 else 'ies retrieve'} fewer than "
             f"{depth} results, the largest cutoff; missing ranks count as non-relevant")
    if tally.tie_queries:
        warn(f"{tally.tie_queries} quer{'y has' if tally.tie_queries == 1 else 'ies have'} tied "
             f"scores ({tally.tie_queries_in_depth} within the top {depth}); ties are broken by "
             f"skill id, descending, as trec_eval does", tally.first_tie_line)
    swapped = swap_warning(tally.swaps, source, fmt_name)
    if swapped:
        warnings.append(swapped)
    elif tally.rank_rows:
        warn(f"the rank column disagrees with the score order on {tally.rank_rows} rows in "
             f"{tally.rank_queries} quer{'y' if tally.rank_queries == 1 else 'ies'}; ranks are "
             f"ignored, results are ordered by score (as trec_eval does)", tally.first_rank_line)
    extra = tally.extra_fields
    if extra:
        warn(f"{extra} line{'s have' if extra != 1 else ' has'} fields after the run tag; they "
             f"are ignored (as trec_eval does)")
    if qrels.duplicates:
        warnings.append(f"{qrels.source or '<qrels>'}: {qrels.duplicates} duplicate "
                        f"judgment{'s' if qrels.duplicates != 1 else ''} (same query, skill and "
                        f"grade) dropped")

    return {
        "run": source,
        "format": fmt_name,
        "qrels": qrels.source,
        "status": "warnings" if warnings else "ok",
        "queries": {"in_run": counts.in_run, "in_qrels": counts.judged,
                    "in_both": counts.in_both, "missing": counts.missing, "empty": counts.empty,
                    "unjudged": counts.unjudged},
        "results": {
            "rows": int(retrieved.sum()),
            "min": int(nonempty.min()) if len(nonempty) else 0,
            "median": float(np.median(nonempty)) if len(nonempty) else 0.0,
            "max": int(nonempty.max()) if len(nonempty) else 0,
            "depth": int(depth),
            "shallow": shallow,
        },
        "judged": judged,
        "ties": {"queries": tally.tie_queries, "queries_within_depth": tally.tie_queries_in_depth,
                 "pairs": tally.tie_pairs},
        "rank_column": {"present": tally.rank_present, "disagreeing_rows": tally.rank_rows,
                        "disagreeing_queries": tally.rank_queries},
        "swapped_columns": tally.swaps.as_dict(),
        "extra_fields": extra,
        "qrels_duplicates_dropped": int(qrels.duplicates),
        "cross_check": None,
        "warnings": warnings,
        "notices": notices,
    }


def add_cross_check(report: dict, qrels: Qrels, results: QueryResults, carried: dict) -> None:
    """Put the cross-check of the `carried` values in a report, its warning (metrics the file
    carries that these qrels do not reproduce) last."""
    recomputed = aggregate(Profile("cross-check", tuple(carried), query_set=RUN_JUDGED,
                                   rounding=5), results, qrels)
    differences = {}
    for name, value in carried.items():
        mine, number = recomputed[name], float(value)
        if not math.isfinite(number):  # kept as text: the report is strict JSON
            text = "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"
            differences[name] = {"file": text, "recomputed": mine}
        elif round(number, 5) != mine:
            differences[name] = {"file": number, "recomputed": mine}
    report["cross_check"] = {"checked": len(carried), "differ": len(differences),
                             "differences": differences}
    if differences:
        names = ", ".join(f"{k} {v['file']} vs {v['recomputed']}"
                          for k, v in differences.items())
        report["warnings"].append(
            f"{report['run'] or '<run>'}: the metrics this file carries differ from those "
            f"recomputed on these qrels: {names} ({WRONG_SPLIT_HINT})")
        report["status"] = "warnings"
