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
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pyarrow as pa

from . import arrow
from .atomic import atomic_path
from .engine import QueryResults, evaluate_chunk, rank_chunk
from .lookups import Judgments
from .errors import ConfigError, ValidationFailed
from .io import RunSource, load_qrels, run_input
from .judgments import Qrels
from .names import Metric, parse_metric
from .ordering import trec_scores
from .profiles import Profile
from .runs import MAX_RESULTS_PER_QUERY, RunChunk
from .evaluator import check_overlap, consume_chunks

WRONG_SPLIT_HINT = ("a different qrels version or split? SkillRet v1.0's test split had 4,997 "
                    "queries, v1.1 has 4,392")


@dataclass
class _Tally:
    """What the chunks add up to."""

    retrieved: list = field(default_factory=list)
    queries: list = field(default_factory=list)
    judged: list = field(default_factory=list)
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


def _tally_chunk(chunk: RunChunk, judgments: Judgments, depth: int, tally: _Tally, source,
                 cross_metrics: list[Metric]) -> tuple[np.ndarray | None, np.ndarray]:
    perm, ranks = rank_chunk(chunk, source)
    nq = len(chunk.queries)
    tally.extra_fields += chunk.extra_fields
    tally.queries.append(chunk.queries)
    tally.retrieved.append(np.bincount(chunk.row_query, minlength=nq))
    tally.judged.append(judgments.query_index(chunk.queries))
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
    if chunk.rank is not None:
        tally.rank_present = True
        file_rank = chunk.rank[order]
        wrong = file_rank != ranks
        if wrong.any():
            tally.rank_rows += int(wrong.sum())
            tally.rank_queries += len(np.unique(chunk.row_query[order][wrong]))
            if tally.first_rank_line is None and chunk.line is not None:
                tally.first_rank_line = int(chunk.line[order][wrong].min())
    if cross_metrics:
        tally.results.append(evaluate_chunk(chunk, judgments, cross_metrics,
                                            max(m.k for m in cross_metrics), source,
                                            ranked=(perm, ranks)))
    return perm, ranks


def canonical_table(chunk: RunChunk, perm, ranks) -> pa.Table:
    """A chunk's rows in ranked order, with a (query, null, null, null) row per empty ranking."""
    order = np.arange(len(chunk)) if perm is None else perm
    nq = len(chunk.queries)
    counts = np.bincount(chunk.row_query, minlength=nq)
    empty = np.flatnonzero(counts == 0)
    query_pos = np.concatenate([chunk.row_query[order], empty])
    arrange = np.argsort(query_pos, kind="stable")
    n = len(order)
    skill = arrow.take(pa.concat_arrays([arrow.take(chunk.skill_id, order),
                                      pa.nulls(len(empty), pa.string())]), arrange)
    score = pa.array(np.concatenate([chunk.score[order], np.zeros(len(empty))])[arrange],
                     mask=(arrange >= n))
    rank = pa.array(np.concatenate([ranks, np.zeros(len(empty), np.int64)])[arrange],
                    mask=(arrange >= n))
    return pa.Table.from_arrays([arrow.take(chunk.queries, query_pos[arrange]), skill, score, rank],
                                schema=CANONICAL_SCHEMA)


def _cross_metrics(run) -> tuple[list[Metric], dict]:
    metadata = getattr(run, "metadata", None) or {}
    carried = metadata.get("metrics") or {}
    metrics, known = [], {}
    for name, value in carried.items():
        try:
            metric = parse_metric(name)
        except ConfigError:  # a carried value that is not a metric we know
            continue
        metrics.append(metric)
        known[metric.short_name()] = value
    return metrics, known


def validate(qrels, run, *, depth: int = 15, strict: bool = False,
             normalized: str | os.PathLike | None = None, fmt: str | None = None,
             split: str | None = None, columns: dict | None = None,
             max_results_per_query: int = MAX_RESULTS_PER_QUERY) -> dict:
    """Check ``run`` against ``qrels``; return the report (JSON-ready, plain numbers).

    ``normalized``: write the canonical run there (Parquet: query_id, skill_id, score, rank;
    queries in run order, results in tie-rule order; an empty ranking is one row with nulls),
    only when validation passes. A query with more than ``max_results_per_query`` results is an
    error. Raises :class:`InputError` on errors and :class:`ValidationFailed` when ``strict``
    and there are warnings.
    """
    qrels = load_qrels(qrels)
    judgments = Judgments(qrels)
    run = run_input(run, fmt=fmt, split=split, columns=columns)
    source = run.source
    fmt_name = run.fmt if isinstance(run, RunSource) else None

    # Metrics a SkillRet results file carries need the document parsed first.
    loaded = run.read(with_rank=True) if isinstance(run, RunSource) and not run.streamable \
        else run
    cross_metrics, carried = _cross_metrics(loaded)

    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(atomic_path(normalized)) if normalized is not None else None

        def consume(chunks: Iterator[RunChunk], src) -> _Tally:
            tally = _Tally()
            writer = _CanonicalWriter(tmp) if tmp is not None else None
            try:
                for chunk in chunks:
                    perm, ranks = _tally_chunk(chunk, judgments, depth, tally, src,
                                                   cross_metrics)
                    if writer is not None:
                        writer.write(canonical_table(chunk, perm, ranks))
            finally:
                if writer is not None:
                    writer.close()  # an empty run still gets its (empty) file
            return tally

        tally, notices, _ = consume_chunks(loaded, consume, with_rank=True,
                                            max_results=max_results_per_query)
        report = _report(qrels, tally, source, fmt_name, depth, cross_metrics,
                         carried, notices)
        if strict and report["warnings"]:
            raise ValidationFailed(
                f"{source}: {len(report['warnings'])} warning(s) under strict validation: "
                + "; ".join(report["warnings"]), report)
    return report


#: Rows per row group of the canonical Parquet file.
CANONICAL_ROW_GROUP = 1 << 18


class _CanonicalWriter:
    """Writes the canonical run in row groups of exactly ``CANONICAL_ROW_GROUP`` rows (the last
    one shorter), whatever the chunks it is handed: the same run gives the same bytes whether it
    was streamed from TREC text in blocks or read whole from another format."""

    def __init__(self, path):
        import pyarrow.parquet as pq
        self._writer = pq.ParquetWriter(path, CANONICAL_SCHEMA, compression="zstd")
        self._pending: list[pa.Table] = []
        self._rows = 0

    def write(self, table: pa.Table) -> None:
        self._pending.append(table)
        self._rows += table.num_rows
        if self._rows >= CANONICAL_ROW_GROUP:
            self._flush(final=False)

    def _flush(self, final: bool) -> None:
        table = pa.concat_tables(self._pending).combine_chunks() if self._pending else None
        self._pending, self._rows = [], 0
        if table is None:
            return
        full = table.num_rows if final else table.num_rows - table.num_rows % CANONICAL_ROW_GROUP
        for start in range(0, full, CANONICAL_ROW_GROUP):
            self._writer.write_table(table.slice(start, min(CANONICAL_ROW_GROUP, full - start)))
        if full < table.num_rows:
            self._pending, self._rows = [table.slice(full)], table.num_rows - full

    def close(self) -> None:
        try:
            self._flush(final=True)
        finally:
            self._writer.close()


CANONICAL_SCHEMA = pa.schema([("query_id", pa.string()), ("skill_id", pa.string()),
                               ("score", pa.float64()), ("rank", pa.int64())])


def _report(qrels: Qrels, tally: _Tally, source, fmt_name, depth, cross_metrics,
            carried, notices) -> dict:
    queries = pa.concat_arrays(tally.queries) if tally.queries else pa.array([], pa.string())
    retrieved = np.concatenate(tally.retrieved) if tally.retrieved else np.zeros(0, np.int64)
    judged = np.concatenate(tally.judged) if tally.judged else np.zeros(0, np.int64)
    results = QueryResults(queries, judged, retrieved, {})
    check_overlap(qrels, results, source)

    in_run, in_qrels = len(queries), len(qrels.queries)
    in_both = int((judged >= 0).sum())
    missing = in_qrels - in_both
    empty = int((retrieved == 0).sum())
    unjudged = in_run - in_both
    nonempty = retrieved[retrieved > 0]
    shallow = int(((retrieved > 0) & (retrieved < depth)).sum())
    where = source or "<run>"
    warnings: list[str] = []

    def warn(text, line=None):
        warnings.append(f"{where}{'' if line is None else f':{line}'}: {text}")

    if missing:
        present = np.zeros(in_qrels, bool)
        present[judged[judged >= 0]] = True
        example = qrels.queries[int(np.flatnonzero(~present)[0])].as_py()
        warn(f"{missing} judged quer{'y is' if missing == 1 else 'ies are'} missing from the run "
             f"(e.g. {example!r}); the official profile ignores them, all-judged profiles "
             f"score them 0")
    if empty:
        example = queries[int(np.flatnonzero(retrieved == 0)[0])].as_py()
        warn(f"{empty} quer{'y has' if empty == 1 else 'ies have'} an empty ranking "
             f"(e.g. {example!r}); they score 0")
    if unjudged:
        example = queries[int(np.flatnonzero(judged < 0)[0])].as_py()
        warn(f"{unjudged} run quer{'y has' if unjudged == 1 else 'ies have'} no judgments "
             f"(e.g. {example!r}) and {'is' if unjudged == 1 else 'are'} ignored")
    if shallow:
        warn(f"{shallow} quer{'y retrieves' if shallow == 1 else 'ies retrieve'} fewer than "
             f"{depth} results, the largest cutoff; missing ranks count as non-relevant")
    if tally.tie_queries:
        warn(f"{tally.tie_queries} quer{'y has' if tally.tie_queries == 1 else 'ies have'} tied "
             f"scores ({tally.tie_queries_in_depth} within the top {depth}); ties are broken by "
             f"skill id, descending, as trec_eval does", tally.first_tie_line)
    if tally.rank_rows:
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

    cross = None
    if cross_metrics:
        cross = _cross_check(qrels, tally, cross_metrics, carried)
        if cross["differ"]:
            names = ", ".join(f"{k} {v['file']} vs {v['recomputed']}"
                              for k, v in cross["differences"].items())
            warn(f"the metrics this file carries differ from those recomputed on these qrels: "
                 f"{names} ({WRONG_SPLIT_HINT})")

    report = {
        "run": source,
        "format": fmt_name,
        "qrels": qrels.source,
        "status": "warnings" if warnings else "ok",
        "queries": {"in_run": in_run, "in_qrels": in_qrels, "in_both": in_both,
                    "missing": missing, "empty": empty, "unjudged": unjudged},
        "results": {
            "rows": int(retrieved.sum()),
            "min": int(nonempty.min()) if len(nonempty) else 0,
            "median": float(np.median(nonempty)) if len(nonempty) else 0.0,
            "max": int(nonempty.max()) if len(nonempty) else 0,
            "depth": int(depth),
            "shallow": shallow,
        },
        "ties": {"queries": tally.tie_queries, "queries_within_depth": tally.tie_queries_in_depth,
                 "pairs": tally.tie_pairs},
        "rank_column": {"present": tally.rank_present, "disagreeing_rows": tally.rank_rows,
                        "disagreeing_queries": tally.rank_queries},
        "extra_fields": extra,
        "qrels_duplicates_dropped": int(qrels.duplicates),
        "cross_check": cross,
        "warnings": warnings,
        "notices": notices,
    }
    return report


def _cross_check(qrels: Qrels, tally: _Tally, metrics: list[Metric], carried: dict) -> dict:
    from .aggregate import aggregate
    results = QueryResults.concat(tally.results, metrics, sorted({m.rel for m in metrics}))
    names = tuple(m.short_name() for m in metrics)
    profile = Profile("cross-check", names, query_set="official", rounding=5)
    recomputed = aggregate(profile, results, qrels)
    differences = {}
    for name, value in carried.items():
        mine = recomputed[name]
        if round(float(value), 5) != mine:
            differences[name] = {"file": float(value), "recomputed": mine}
    return {"checked": len(carried), "differ": len(differences), "differences": differences}


__all__ = ["validate", "canonical_table", "CANONICAL_SCHEMA", "WRONG_SPLIT_HINT"]
