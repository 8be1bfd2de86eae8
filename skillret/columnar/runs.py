"""Runs in columnar form, and their division into chunks of whole queries.

A run's `queries` list every query in first-appearance order, including queries with an empty
ranking (possible in JSON). The official evaluator sums per-query values in that order, so it
is kept everywhere. The engine consumes `RunChunk`s: whole queries, rows grouped by query.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable, Iterable, Iterator, Protocol, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.convert import flatten_nested
from skillret.errors import InputError
from skillret import limits
from skillret.columnar.strings import EqualLengthIds, as_string_array, starts

#: Rows per chunk of a run in memory (bounds the engine's working memory).
CHUNK_ROWS = 4_000_000


@dataclass
class RunChunk:
    """Whole queries (run order), rows grouped by query.

    row_query: position of each row's query in `queries`, non-decreasing.
    line:      1-based source line per row, or None when the format has no lines.
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
        """Cached: the duplicate check and the judgment lookup share them."""
        return EqualLengthIds.of(self.skill_id)


@dataclass
class RowBatch:
    """Rows in file order, as a reader produces them (queries not necessarily grouped).

    `empty` marks placeholder rows for a query that retrieved nothing. `ends_query`: the last
    query has no rows in the next batch.
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
        return _each(self, lambda v: arrow.filter(v, keep) if isinstance(v, pa.Array) else v[keep])


_COLUMNS = ("query_id", "skill_id", "score", "line", "rank", "empty")


def _each(batch: RowBatch, how: Callable) -> RowBatch:
    """`batch` with `how` applied to each column it has."""
    return replace(batch, **{name: None if getattr(batch, name) is None
                             else how(getattr(batch, name)) for name in _COLUMNS})


def _concat(batches: list[RowBatch]) -> RowBatch:
    """The rows of `batches` as one batch, with the last one's flags."""
    def cat(name):
        parts = [getattr(b, name) for b in batches]
        if name == "empty" and any(p is not None for p in parts):
            parts = [np.zeros(len(b), bool) if p is None else p for b, p in zip(batches, parts)]
        if any(p is None for p in parts):
            return None
        return pa.concat_arrays(parts) if isinstance(parts[0], pa.Array) else np.concatenate(parts)
    return replace(batches[-1], **{name: cat(name) for name in _COLUMNS})


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
    metadata: dict | None = None
    extra_fields: int = 0             # TREC lines with fields after the run tag

    @classmethod
    def from_columns(cls, query_id, skill_id, score, *, queries=None, source=None, line=None,
                     rank=None, extra_fields=0) -> "Run":
        query_id = as_string_array(query_id)
        queries = pc.unique(query_id) if queries is None else as_string_array(queries)
        return cls(query_id, as_string_array(skill_id), np.asarray(score, dtype=np.float64),
                   queries, source=source, line=line, rank=rank, extra_fields=extra_fields)

    @classmethod
    def from_batches(cls, batches: Iterable[RowBatch], *, source=None) -> "Run":
        batches = list(batches)
        if not batches:
            return cls.from_columns([], [], [], source=source)
        whole = _concat(batches)
        rows = whole.without_empty()
        return cls.from_columns(rows.query_id, rows.skill_id, rows.score,
                                queries=pc.unique(whole.query_id), source=source, line=rows.line,
                                rank=rows.rank, extra_fields=sum(b.extra_fields for b in batches))

    @classmethod
    def from_dict(cls, results: dict, *, source: str | None = None) -> "Run":
        """From `{query_id: {skill_id: score}}` (dict order kept)."""
        qid, sid, score, queries = flatten_nested(results, what="run", source=source)
        return cls(qid, sid, score, queries, source=source)

    def __len__(self) -> int:
        return len(self.score)

    def read(self, *, with_rank: bool = False) -> "Run":
        """Self; mirrors `RunSource.read`."""
        return self

    def row_query(self) -> np.ndarray:
        """Position of each row's query in `queries`."""
        return arrow.to_numpy(pc.index_in(self.query_id, value_set=self.queries)).astype(np.int64)

    def chunks(self, *, with_rank: bool = False, max_results: int | None = None,
               max_rows: int = CHUNK_ROWS) -> Iterator[RunChunk]:
        """Whole-query chunks in run order, rows stably grouped; mirrors `RunSource.chunks`.
        InputError if a query has more than `max_results` (default: the limit)."""
        max_results = limits.current().results_per_query if max_results is None else max_results
        nq = len(self.queries)
        row_query = self.row_query()
        perm = None
        if len(row_query) > 1 and (row_query[1:] < row_query[:-1]).any():
            perm = np.argsort(row_query, kind="stable")
            row_query = row_query[perm]
        counts = np.bincount(row_query, minlength=nq)
        ends = np.cumsum(counts)

        def at(rows):  # rows of the grouped order, as rows of the run
            return rows if perm is None else perm[rows]
        _check_sizes(self.source, self.queries, counts, max_results, None if self.line is None
                     else lambda q: self.line[at(int(ends[q] - counts[q]) + max_results)])
        q0 = 0
        while q0 < nq:
            start = int(ends[q0 - 1]) if q0 else 0
            q1 = int(np.searchsorted(ends, start + max_rows, side="right"))
            q1 = min(max(q1, q0 + 1), nq)
            stop = int(ends[q1 - 1])
            rows = at(slice(start, stop))
            skill_id = self.skill_id[rows] if perm is None else arrow.take(self.skill_id, rows)
            yield RunChunk(self.queries[q0:q1], row_query[start:stop] - q0, skill_id,
                           *(None if v is None else v[rows] for v in (self.score, self.line,
                                                                      self.rank)),
                           extra_fields=self.extra_fields if q0 == 0 else 0)
            q0 = q1


class NotGrouped(Exception):
    """A streamed query's rows start again after other queries': chunks yielded so far may
    hold part of it. Read the run whole instead, which groups it."""

    def __init__(self, query: str, line: int | None = None):
        self.query, self.line = query, line
        where = f" at line {line:,}" if line is not None else ""
        super().__init__(f"the rows of query {query!r} start again{where}, after other "
                         f"queries' rows")


class OpenedRun(Protocol):
    """A `Run`, or a `RunSource` from `open_run` (which also has `fmt`)."""

    source: str | None

    def chunks(self, *, with_rank: bool = False,
               max_results: int | None = None) -> Iterator[RunChunk]: ...

    def read(self, *, with_rank: bool = False) -> "Run": ...


T = TypeVar("T")


def consume_chunks(run: OpenedRun, consume: Callable[[Iterator[RunChunk]], T], *,
                   with_rank: bool = False, max_results: int | None = None
                   ) -> tuple[T, list[str]]:
    """`consume(chunks)` streamed, and notices for the user. On `NotGrouped` the run is read
    whole and consumed again; the notice says how to group it."""
    try:
        with contextlib.closing(run.chunks(with_rank=with_rank, max_results=max_results)) as chunks:
            return consume(chunks), []
    except NotGrouped as not_grouped:
        whole = run.read(with_rank=with_rank)
        with contextlib.closing(whole.chunks(max_results=max_results)) as chunks:
            consumed = consume(chunks)
        path = run.source
        if run.fmt == "parquet":
            grouping = "write it with each query's rows together (stably sorted by query id)"
        elif path.lower().endswith(".gz"):
            grouping = f"zcat {path} | sort -k1,1 -s | gzip > sorted.trec.gz"
        else:
            grouping = f"sort -k1,1 -s {path} > sorted.trec"
        return consumed, [f"{path}: {not_grouped}, so the run was read into memory instead of "
                          f"streamed; to stream it, group it by query first: {grouping}"]


def chunk_batches(batches: Iterable[RowBatch], *, source: str | None = None,
                  max_results: int = limits.MAX_RESULTS_PER_QUERY) -> Iterator[RunChunk]:
    """Whole-query chunks from the batches of a query-grouped file.

    A batch's last query is held back until the next batch shows its end, unless `ends_query`.
    More than `max_results` rows for a query is an error (one endless query cannot fill
    memory). `NotGrouped` is raised before yielding a chunk holding a query seen before.
    """
    carry: RowBatch | None = None
    seen: set = set()
    extra = 0
    for batch in batches:
        extra += batch.extra_fields
        if carry is not None and len(carry):
            batch = _concat([carry, batch])
        if len(batch) == 0:
            continue
        new_block = starts(batch.query_id)
        first_rows = np.flatnonzero(new_block)
        heads = arrow.take(batch.query_id, first_rows)
        lines = batch.line
        _check_sizes(source, heads, np.diff(np.append(first_rows, len(batch))), max_results,
                    None if lines is None else lambda i: lines[first_rows[i] + max_results])
        if batch.ends_query:
            first_rows = np.append(first_rows, len(batch))
        last = int(first_rows[-1])
        carry = _each(batch, lambda v: v[last:]) if last < len(batch) else None
        queries = heads[:len(first_rows) - 1] if last else None
        if queries is not None:
            _add_new(seen, queries, None if batch.line is None else batch.line[first_rows[:-1]])
        if carry is not None and carry.query_id[0].as_py() in seen:
            raise NotGrouped(carry.query_id[0].as_py(),
                             None if carry.line is None else int(carry.line[0]))
        if queries is None:
            continue
        yield _chunk(queries, np.cumsum(new_block[:last]) - 1, _each(batch, lambda v: v[:last]),
                     extra)
        extra = 0
    if carry is not None and len(carry):
        queries = carry.query_id[:1]
        _add_new(seen, queries, None if carry.line is None else carry.line[:1])
        yield _chunk(queries, np.zeros(len(carry), np.int64), carry, extra)


def _add_new(seen: set, queries: pa.Array, lines: np.ndarray | None) -> None:
    """Adds `queries` to `seen`: NotGrouped for one already there or given twice."""
    for i, query in enumerate(queries.to_pylist()):
        if query in seen:
            raise NotGrouped(query, None if lines is None else int(lines[i]))
        seen.add(query)


def _check_sizes(source: str | None, queries: pa.Array, sizes: np.ndarray, max_results: int,
                line_past: Callable[[int], int] | None = None) -> None:
    """InputError if `queries[i]` has `sizes[i]` rows, more than `max_results`;
    `line_past(i)`: the line of its first row past the limit."""
    if len(sizes) and sizes.max() > max_results:
        i = int(np.argmax(sizes > max_results))
        raise InputError(source, f"query {queries[i].as_py()!r} has more than {max_results:,} "
                                 "results", line=None if line_past is None else int(line_past(i)),
                         hint="raise the limit with --max-results-per-query (library: "
                              "max_results_per_query=) if the run is meant to be this deep")


def _chunk(queries: pa.Array, row_query: np.ndarray, rows: RowBatch, extra: int) -> RunChunk:
    """Drops the rows that only mark an empty ranking."""
    if rows.empty is not None:
        row_query = row_query[~rows.empty]
    rows = rows.without_empty()
    return RunChunk(queries, row_query, rows.skill_id, rows.score, rows.line, rows.rank, extra)
