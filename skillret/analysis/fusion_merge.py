"""The two routes to the fusion kernel over whole-query chunks: every run whole in one call
(`fuse_whole`), or runs read side by side and sort-merged on the query id, a query fused
once every run has read past it (`merged` over `Stream`), in memory bounded by a
chunk per run. Both give the same results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.analysis.fusion_methods import Fusion, Part, Ranked, fuse_parts
from skillret.columnar import arrow


def fuse_whole(loaded: list, fusion: Fusion, weights: np.ndarray, names: list[str]) -> Ranked:
    """Every run whole: one kernel call over the union of their queries."""
    chunk_lists = [list(run.chunks()) for run in loaded]
    every = [c.queries for chunks in chunk_lists for c in chunks]
    queries = sorted_queries(every)
    parts = [run_part(chunks, queries) for chunks in chunk_lists]
    return fuse_parts(queries, parts, fusion, weights, names)


def sorted_queries(arrays: list[pa.Array]) -> pa.Array:
    """The query ids of `arrays`, each once, in byte order."""
    if not arrays:
        return arrow.empty(pa.string())
    values = pc.unique(pa.chunked_array(arrays, pa.string()).combine_chunks())
    return arrow.take(values, pc.array_sort_indices(values))


def run_part(chunks: list, queries: pa.Array) -> Part:
    """Chunks of one run as a Part over `queries` (rows stay grouped by query)."""
    if not chunks:
        return Part(np.zeros(0, np.int64), arrow.empty(pa.string()), np.zeros(0))
    row_query = [arrow.to_numpy(pc.index_in(c.queries, queries)).astype(np.int64)[c.row_query]
                 for c in chunks]
    return Part(np.concatenate(row_query),
                pa.chunked_array([c.skill_id for c in chunks], pa.string()).combine_chunks(),
                np.concatenate([c.score for c in chunks]))


class Unsorted(Exception):
    """A run's queries are not in ascending id order: it cannot be sort-merged."""


@dataclass
class Stream:
    """One run being read: chunks not yet fused, and the last query id read."""

    name: str
    chunks: Iterator
    pending: list = field(default_factory=list)
    last: str | None = None
    done: bool = False

    def pull(self) -> None:
        chunk = next(self.chunks, None)
        if chunk is None:
            self.done = True
            return
        queries = chunk.queries
        if not len(queries):
            return
        if len(queries) > 1 and pc.any(pc.call_function(
                "less_equal", [queries[1:], queries[:-1]])).as_py():
            raise Unsorted(self.name)
        if self.last is not None and queries[0].as_py() <= self.last:
            raise Unsorted(self.name)
        self.last = queries[-1].as_py()
        self.pending.append(chunk)

    def take(self, upto: str | None) -> list:
        """Split off the pending queries up to `upto` (all when None), as chunks."""
        if upto is None:
            ready, self.pending = self.pending, []
            return ready
        ready = []
        while self.pending:
            chunk = self.pending[0]
            n = int(pc.sum(pc.call_function("less_equal", [chunk.queries, arrow.scalar(upto)]))
                    .as_py() or 0)
            if n == len(chunk.queries):
                ready.append(self.pending.pop(0))
                continue
            if n:
                cut = int(np.searchsorted(chunk.row_query, n))
                ready.append(_Piece(chunk.queries[:n], chunk.row_query[:cut],
                                    chunk.skill_id[:cut], chunk.score[:cut]))
                self.pending[0] = _Piece(chunk.queries[n:], chunk.row_query[cut:] - n,
                                         chunk.skill_id[cut:], chunk.score[cut:])
            break
        return ready


@dataclass
class _Piece:
    queries: pa.Array
    row_query: np.ndarray
    skill_id: pa.Array
    score: np.ndarray


def merged(streams: list[Stream], fusion: Fusion, weights: np.ndarray, names: list[str]
           ) -> Iterator[Ranked]:
    """Sort-merge the streams on the query id: fuse a query once every run has read past it."""
    while not all(s.done for s in streams):
        behind = [s for s in streams if not s.done]
        min(behind, key=lambda s: (s.last is not None, s.last or "")).pull()
        behind = [s for s in streams if not s.done]
        if any(s.last is None for s in behind):
            continue
        upto = min(s.last for s in behind) if behind else None
        ranked = _fuse_ready(streams, upto, fusion, weights, names)
        if ranked is not None:
            yield ranked
    ranked = _fuse_ready(streams, None, fusion, weights, names)
    if ranked is not None:
        yield ranked


def _fuse_ready(streams, upto, fusion, weights, names) -> Ranked | None:
    ready = [s.take(upto) for s in streams]
    queries = sorted_queries([c.queries for chunks in ready for c in chunks])
    if not len(queries):
        return None
    return fuse_parts(queries, [run_part(chunks, queries) for chunks in ready], fusion, weights,
                      names)


__all__ = ["fuse_whole", "merged", "Stream", "Unsorted", "sorted_queries", "run_part"]
