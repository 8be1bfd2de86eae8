"""Runs in canonical columnar form, and their division into chunks of whole queries.

A run is rows (query_id, skill_id, score) plus the list of every query it holds in the order
queries first appear, which includes queries with an empty ranking (only mapping formats such as
JSON can say "this query retrieved nothing"). That order is the order in which the official
evaluator adds per-query values, so it is kept everywhere.

The engine consumes `RunChunk` objects: a set of whole queries, their rows grouped by
query. Large line-oriented files are streamed chunk by chunk (see `chunk_batches`); runs in
memory are cut into chunks by `Run.chunks`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterable, Iterator, Protocol, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.convert import flatten_nested
from skillret.errors import InputError
from skillret.limits import MAX_RESULTS_PER_QUERY, results_per_query
from skillret.columnar.strings import EqualLengthIds, as_string_array, starts

#: Rows per chunk when a run in memory is cut up (bounds the engine's working memory).
CHUNK_ROWS = 4_000_000


@dataclass
class RunChunk:
    """Whole queries: `queries` (string, run order) and rows grouped by query.

    row_query: int64 per row, the position of its query in `queries`, non-decreasing.
    line:      1-based source line per row, for messages (None when the format has no lines).
    rank:      the file's rank column, if it had one (only validation looks at it).
    """

    queries: pa.Array
    row_query: np.ndarray
    skill_id: pa.Array
    score: np.ndarray
    line: np.ndarray | None = None
    rank: np.ndarray | None = None
    extra_fields: int = 0             # TREC lines with fields after the run tag

    def __len__(self) -> int:
        return len(self.score)

    @cached_property
    def equal_length_ids(self) -> EqualLengthIds | None:
        """The skill ids as bytes and fingerprints when they all have one length (computed
        once: the duplicate check and the judgment lookup share them)."""
        return EqualLengthIds.of(self.skill_id)


@dataclass
class RowBatch:
    """Rows as a reader produces them, in file order (queries not necessarily grouped).

    `empty` marks rows that only say "this query retrieved nothing" (a row with neither skill
    nor score in a table format); their skill and score are placeholders. `ends_query`: the
    reader knows that the batch's last query has no rows in the next batch. `extra_fields`:
    TREC lines of the batch with fields after the run tag.
    """

    query_id: pa.Array
    skill_id: pa.Array
    score: np.ndarray
    line: np.ndarray | None = None
    rank: np.ndarray | None = None
    empty: np.ndarray | None = None
    ends_query: bool = False
    extra_fields: int = 0

    def __len__(self) -> int:
        return len(self.score)

    def without_empty(self) -> "RowBatch":
        if self.empty is None or not self.empty.any():
            return self
        keep = ~self.empty
        return RowBatch(arrow.filter(self.query_id, keep), arrow.filter(self.skill_id, keep),
                        self.score[keep], None if self.line is None else self.line[keep],
                        None if self.rank is None else self.rank[keep],
                        extra_fields=self.extra_fields)


@dataclass
class Run:
    """A whole run in memory."""

    query_id: pa.Array
    skill_id: pa.Array
    score: np.ndarray
    queries: pa.Array                 # every query, first-appearance order, empty ones included
    source: str | None = None
    line: np.ndarray | None = None
    rank: np.ndarray | None = None
    metadata: dict | None = None      # e.g. the metrics a SkillRet results JSON carries
    extra_fields: int = 0             # TREC lines with fields after the run tag

    @classmethod
    def from_columns(cls, query_id, skill_id, score, *, queries=None, source=None, line=None,
                     rank=None, metadata=None) -> "Run":
        query_id = as_string_array(query_id)
        skill_id = as_string_array(skill_id)
        score = np.asarray(score, dtype=np.float64)
        if queries is None:
            queries = pc.unique(query_id) if len(query_id) else arrow.empty(pa.string())
        else:
            queries = as_string_array(queries)
        return cls(query_id, skill_id, score, queries, source=source, line=line, rank=rank,
                   metadata=metadata)

    @classmethod
    def from_batches(cls, batches: Iterable[RowBatch], *, source=None, metadata=None) -> "Run":
        batches = list(batches)
        if not batches:
            empty = arrow.empty(pa.string())
            return cls(empty, empty, np.zeros(0), empty, source=source, metadata=metadata)

        def cat(name):
            parts = [getattr(b, name) for b in batches]
            if any(p is None for p in parts):
                return None
            return np.concatenate(parts)

        all_queries = pa.chunked_array([b.query_id for b in batches], pa.string())
        queries = pc.unique(all_queries.combine_chunks()) if len(all_queries) else None
        batches = [b.without_empty() for b in batches]
        query_id = pa.chunked_array([b.query_id for b in batches], pa.string()).combine_chunks()
        skill_id = pa.chunked_array([b.skill_id for b in batches], pa.string()).combine_chunks()
        run = cls.from_columns(query_id, skill_id, cat("score"), queries=queries, source=source,
                               line=cat("line"), rank=cat("rank"), metadata=metadata)
        run.extra_fields = sum(b.extra_fields for b in batches)
        return run

    @classmethod
    def from_dict(cls, results: dict, *, source: str | None = None) -> "Run":
        """From pytrec_eval's `{query_id: {skill_id: score}}` (dict order kept)."""
        qid, sid, score, queries = flatten_nested(results, what="run", source=source)
        return cls(qid, sid, score, queries, source=source)

    def __len__(self) -> int:
        return len(self.score)

    def read(self, *, with_rank: bool = False) -> "Run":
        """This run (it is in memory already), as `skillret.io.RunSource.read` reads a
        file's; `with_rank` is there for that likeness."""
        return self

    def check_results(self, max_results: int | None = None) -> "Run":
        """This run, once no query is found to hold more than `max_results` results (default:
        the limit in force; more is an error naming the query, as `chunks` says)."""
        max_results = results_per_query(max_results)
        if len(self.score) > max_results:
            counts = np.bincount(self.row_query(), minlength=len(self.queries))
            if counts.max() > max_results:
                q = int(np.argmax(counts > max_results))
                too_many(self.source, self.queries[q].as_py(), max_results, None)
        return self

    def row_query(self) -> np.ndarray:
        """Position of each row's query in `queries`."""
        if len(self.score) == 0:
            return np.zeros(0, np.int64)
        return arrow.to_numpy(pc.index_in(self.query_id, value_set=self.queries)).astype(np.int64)

    def chunks(self, *, with_rank: bool = False, max_results: int | None = None,
               max_rows: int = CHUNK_ROWS) -> Iterator[RunChunk]:
        """Whole-query chunks in run order, rows grouped by query (stable within a query), as
        `skillret.io.RunSource.chunks` gives a file's. A query with more than
        `max_results` results (default: the limit in force) is an error. `with_rank` is
        there for that likeness: a run in memory has the rank column it was read with."""
        max_results = results_per_query(max_results)
        nq = len(self.queries)
        row_query = self.row_query()
        perm = None
        if len(row_query) > 1 and (row_query[1:] < row_query[:-1]).any():
            perm = np.argsort(row_query, kind="stable")
            row_query = row_query[perm]
        counts = np.bincount(row_query, minlength=nq)
        if len(counts) and counts.max() > max_results:
            q = int(np.argmax(counts > max_results))
            row = int(np.searchsorted(row_query, q)) + max_results
            line = None
            if self.line is not None:
                line = int(self.line[row if perm is None else perm[row]])
            too_many(self.source, self.queries[q].as_py(), max_results, line)
        ends = np.cumsum(counts)
        # Cut between queries so that each chunk holds about max_rows rows.
        q0 = 0
        while q0 < nq:
            start_row = int(ends[q0 - 1]) if q0 else 0
            q1 = int(np.searchsorted(ends, start_row + max_rows, side="right"))
            q1 = min(max(q1, q0 + 1), nq)
            end_row = int(ends[q1 - 1])
            rows = slice(start_row, end_row)
            take = None if perm is None else perm[rows]

            def pick(values, np_values=False):
                if values is None:
                    return None
                if take is None:
                    return values[rows]
                return values[take] if np_values else arrow.take(values, take)

            yield RunChunk(
                queries=self.queries[q0:q1],
                row_query=row_query[rows] - q0,
                skill_id=pick(self.skill_id),
                score=pick(self.score, True),
                line=pick(self.line, True),
                rank=pick(self.rank, True),
                extra_fields=self.extra_fields if q0 == 0 else 0,
            )
            q0 = q1


class NotGrouped(Exception):
    """A streamed run's query has rows again after other queries' rows: the file is not grouped
    by query, so the chunks yielded so far may hold part of a query. Read the run whole instead
    (`skillret.io.RunSource.read`), which groups it."""

    def __init__(self, query: str, line: int | None = None):
        self.query, self.line = query, line
        where = f" at line {line:,}" if line is not None else ""
        super().__init__(f"the rows of query {query!r} start again{where}, after other "
                         f"queries' rows")


class OpenedRun(Protocol):
    """What scoring, validation and fusion read a run through: a `Run`, or a run file
    opened by `skillret.io.readers.open_run` (a `RunSource`,
    which also has `fmt`)."""

    @property
    def source(self) -> str | None: ...

    def chunks(self, *, with_rank: bool = False,
               max_results: int | None = None) -> Iterator[RunChunk]: ...

    def read(self, *, with_rank: bool = False) -> "Run": ...


T = TypeVar("T")


def consume_chunks(run: OpenedRun, consume: Callable[[Iterator[RunChunk]], T], *,
                   with_rank: bool = False, max_results: int | None = None
                   ) -> tuple[T, list[str]]:
    """`consume(chunks)` over the run's chunks, streamed when the run allows, and the notices
    for the user. A TREC or Parquet file whose queries turn out not to be grouped
    (`NotGrouped`, found out as it is read) is read whole and consumed again from the
    start; the notice says why and how to group it."""
    try:
        streamed = run.chunks(with_rank=with_rank, max_results=max_results)
        with contextlib.closing(streamed) as chunks:
            return consume(chunks), []
    except NotGrouped as not_grouped:
        whole = run.read(with_rank=with_rank)
        with contextlib.closing(whole.chunks(max_results=max_results)) as chunks:
            return consume(chunks), [not_grouped_notice(run, not_grouped)]


def not_grouped_notice(run: OpenedRun, why: NotGrouped) -> str:
    """What the user is told when a run file (`source` and `fmt`) is read whole because its
    queries are not grouped: why, and how to group it so that it is streamed."""
    path = run.source
    if run.fmt == "parquet":
        grouping = "write it with each query's rows together (stably sorted by query id)"
    elif path.lower().endswith(".gz"):
        grouping = f"zcat {path} | sort -k1,1 -s | gzip > sorted.trec.gz"
    else:
        grouping = f"sort -k1,1 -s {path} > sorted.trec"
    return (f"{path}: {why}, so the run was read into memory instead of streamed; to stream "
            f"it, group it by query first: {grouping}")


def chunk_batches(batches: Iterable[RowBatch], *, source: str | None = None,
                  max_results: int = MAX_RESULTS_PER_QUERY) -> Iterator[RunChunk]:
    """Stream whole-query chunks out of batches of a query-contiguous file.

    The rows of the last query in a batch are held back until the next batch shows where that
    query ends, unless the batch says it ends with that query. A query holding more than
    `max_results` consecutive rows is an error (so one endless query cannot fill memory). A
    query whose rows are not consecutive is found where its rows start again, before the chunk
    holding them is yielded: `NotGrouped` then tells the caller to read the run whole.
    """
    carry: RowBatch | None = None
    seen = _Seen()
    extra = 0
    for batch in batches:
        extra += batch.extra_fields
        if carry is not None and len(carry):
            batch = _concat(carry, batch)
        if len(batch) == 0:
            continue
        new_block = starts(batch.query_id)
        first_rows = np.flatnonzero(new_block)
        _check_results(batch, first_rows, source, max_results)
        if batch.ends_query:
            first_rows = np.append(first_rows, len(batch))
        last = int(first_rows[-1])
        carry = _slice(batch, last, len(batch)) if last < len(batch) else None
        queries = arrow.take(batch.query_id, first_rows[:-1]) if last else None
        if queries is not None:
            seen.add(queries, None if batch.line is None else batch.line[first_rows[:-1]])
        if carry is not None:  # its rows may go on in the next batch
            seen.check(carry.query_id[0].as_py(), None if carry.line is None
                       else int(carry.line[0]))
        if queries is None:
            continue
        chunk = _chunk(queries, np.cumsum(new_block[:last]) - 1, _slice(batch, 0, last))
        chunk.extra_fields, extra = extra, 0
        yield chunk
    if carry is not None and len(carry):
        queries = carry.query_id[:1]
        seen.add(queries, None if carry.line is None else carry.line[:1])
        chunk = _chunk(queries, np.zeros(len(carry), np.int64), carry)
        chunk.extra_fields = extra
        yield chunk


class _Seen:
    """The queries of the chunks yielded so far; a query whose rows start again is
    `NotGrouped`. One set operation per chunk (a chunk holds its queries once each
    when they are grouped)."""

    def __init__(self):
        self.queries: set = set()

    def check(self, query: str, line: int | None) -> None:
        if query in self.queries:
            raise NotGrouped(query, line)

    def add(self, queries: pa.Array, lines: np.ndarray | None) -> None:
        new = queries.to_pylist()
        fresh = set(new)
        if len(fresh) == len(new) and self.queries.isdisjoint(fresh):
            self.queries |= fresh
            return
        earlier: set = set()  # which query came back, and where (the error's path only)
        for i, query in enumerate(new):
            if query in self.queries or query in earlier:
                raise NotGrouped(query, None if lines is None else int(lines[i]))
            earlier.add(query)


def _check_results(batch: RowBatch, first_rows: np.ndarray, source: str | None,
                   max_results: int) -> None:
    """Refuse a run of more than `max_results` rows of one query."""
    sizes = np.diff(np.append(first_rows, len(batch)))
    if len(sizes) and sizes.max() > max_results:
        i = int(np.argmax(sizes > max_results))
        too_many(source, batch.query_id[int(first_rows[i])].as_py(), max_results,
                 None if batch.line is None else int(batch.line[int(first_rows[i]) + max_results]))


def too_many(source: str | None, query: str, max_results: int, line: int | None) -> None:
    raise InputError(source, f"query {query!r} has more than {max_results:,} results",
                     line=line, hint="raise the limit with --max-results-per-query (library: "
                                     "max_results_per_query=) if the run is meant to be this deep")


def _chunk(queries: pa.Array, row_query: np.ndarray, rows: RowBatch) -> RunChunk:
    """A chunk of whole queries; rows that only mark an empty ranking are dropped here."""
    if rows.empty is not None and rows.empty.any():
        row_query = row_query[~rows.empty]
        rows = rows.without_empty()
    return RunChunk(queries=queries, row_query=row_query, skill_id=rows.skill_id,
                    score=rows.score, line=rows.line, rank=rows.rank)


def _slice(batch: RowBatch, start: int, stop: int) -> RowBatch:
    def cut(x):
        return None if x is None else x[start:stop]
    return RowBatch(batch.query_id[start:stop], batch.skill_id[start:stop],
                    batch.score[start:stop], cut(batch.line), cut(batch.rank), cut(batch.empty))


def _concat(a: RowBatch, b: RowBatch) -> RowBatch:
    def cat(x, y):
        return None if x is None or y is None else np.concatenate([x, y])

    def flags(batch):
        return np.zeros(len(batch), bool) if batch.empty is None else batch.empty
    empty = None if a.empty is None and b.empty is None else np.concatenate([flags(a), flags(b)])
    return RowBatch(pa.concat_arrays([a.query_id, b.query_id]),
                    pa.concat_arrays([a.skill_id, b.skill_id]),
                    np.concatenate([a.score, b.score]), cat(a.line, b.line), cat(a.rank, b.rank),
                    empty, b.ends_query, b.extra_fields)
