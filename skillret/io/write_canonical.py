"""The canonical run: what `validate --normalized` writes, the pipeline's run format.

Parquet with columns query_id, skill_id, score, rank; queries in run order, results in tie-rule
order; a query that retrieved nothing is one row with nulls. Written in row groups of exactly
`CANONICAL_ROW_GROUP` rows, so the same run gives the same bytes however it was read.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from skillret.columnar import arrow
from skillret.columnar.runs import RunChunk


def canonical_table(chunk: RunChunk, perm, ranks) -> pa.Table:
    """A chunk's rows in ranked order, with a (query, null, null, null) row per empty ranking."""
    nq = len(chunk.queries)
    counts = np.bincount(chunk.row_query, minlength=nq)
    empty = np.flatnonzero(counts == 0)
    n = len(chunk)
    row_query = chunk.row_query if perm is None else chunk.row_query[perm]
    skill = chunk.skill_id if perm is None else arrow.take(chunk.skill_id, perm)
    score = chunk.score if perm is None else chunk.score[perm]
    if not len(empty):  # rows are already in query order: nothing to interleave
        return pa.Table.from_arrays([arrow.take(chunk.queries, row_query), skill,
                                     arrow.from_numpy(np.asarray(score, np.float64)),
                                     arrow.indices(ranks)], schema=CANONICAL_SCHEMA)
    query_pos = np.concatenate([row_query, empty])
    arrange = np.argsort(query_pos, kind="stable")
    skill = arrow.take(pa.concat_arrays([skill, pa.nulls(len(empty), pa.string())]), arrange)
    score = arrow.from_numpy(np.concatenate([score, np.zeros(len(empty))])[arrange],
                             nulls=(arrange >= n))
    rank = arrow.from_numpy(np.concatenate([ranks, np.zeros(len(empty), np.int64)])[arrange],
                            nulls=(arrange >= n))
    return pa.Table.from_arrays([arrow.take(chunk.queries, query_pos[arrange]), skill, score,
                                 rank], schema=CANONICAL_SCHEMA)


#: Rows per row group of the canonical Parquet file.
CANONICAL_ROW_GROUP = 1 << 18


class CanonicalWriter:
    """Writes the canonical run in row groups of exactly `CANONICAL_ROW_GROUP` rows (the last
    one shorter), whatever the chunks it is handed: the same run gives the same bytes whether it
    was streamed from TREC text in blocks or read whole from another format.

    Row groups are compressed and written on a thread of their own, one at a time, while the
    next chunks are checked (pyarrow's writer releases the GIL)."""

    def __init__(self, path):
        from concurrent.futures import ThreadPoolExecutor

        import pyarrow.parquet as pq
        # lz4, dictionaries for the ids only: half the time of zstd with dictionaries tried on
        # every column (scores never repeat enough), for the same size.
        self._writer = pq.ParquetWriter(path, CANONICAL_SCHEMA, compression="lz4",
                                        use_dictionary=["query_id", "skill_id"])
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="skillret-write")
        self._writing = None
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
        if full:
            self._wait()
            self._writing = self._thread.submit(self._write_groups, table.slice(0, full))
        if full < table.num_rows:
            self._pending, self._rows = [table.slice(full)], table.num_rows - full

    def _write_groups(self, table: pa.Table) -> None:
        for start in range(0, table.num_rows, CANONICAL_ROW_GROUP):
            self._writer.write_table(table.slice(start, CANONICAL_ROW_GROUP))

    def _wait(self) -> None:
        if self._writing is not None:
            writing, self._writing = self._writing, None
            writing.result()

    def close(self) -> None:
        try:
            self._flush(final=True)
            self._wait()
        finally:
            self._thread.shutdown()
            self._writer.close()


CANONICAL_SCHEMA = pa.schema([("query_id", pa.string()), ("skill_id", pa.string()),
                               ("score", pa.float64()), ("rank", pa.int64())])


__all__ = ["canonical_table", "CanonicalWriter", "CANONICAL_SCHEMA", "CANONICAL_ROW_GROUP"]
