"""The canonical run (`validate --normalized`, the pipeline's run format): Parquet with
query_id, skill_id, score, rank; queries in run order, results in tie-rule order; an empty
ranking is one row with nulls.
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
    if not len(empty):  # nothing to interleave
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
    """Row groups of exactly `CANONICAL_ROW_GROUP` rows (the last shorter), so the same run
    gives the same bytes however it was chunked."""

    def __init__(self, path):
        import pyarrow.parquet as pq  # heavy: `score` never writes it

        # dictionaries for the ids only (scores never repeat enough)
        self._writer = pq.ParquetWriter(path, CANONICAL_SCHEMA, compression="lz4",
                                        use_dictionary=["query_id", "skill_id"])
        self._pending: list[pa.Table] = []
        self._rows = 0

    def write(self, table: pa.Table) -> None:
        self._pending.append(table)
        self._rows += table.num_rows
        if self._rows >= CANONICAL_ROW_GROUP:
            self._flush(final=False)

    def _flush(self, final: bool) -> None:
        if not self._pending:
            return
        table = pa.concat_tables(self._pending).combine_chunks()
        full = table.num_rows if final else table.num_rows - table.num_rows % CANONICAL_ROW_GROUP
        for start in range(0, full, CANONICAL_ROW_GROUP):
            self._writer.write_table(table.slice(start, min(CANONICAL_ROW_GROUP, full - start)))
        self._pending = [table.slice(full)] if full < table.num_rows else []
        self._rows = table.num_rows - full

    def close(self) -> None:
        try:
            self._flush(final=True)
        finally:
            self._writer.close()


CANONICAL_SCHEMA = pa.schema([("query_id", pa.string()), ("skill_id", pa.string()),
                               ("score", pa.float64()), ("rank", pa.int64())])


__all__ = ["canonical_table", "CanonicalWriter", "CANONICAL_SCHEMA", "CANONICAL_ROW_GROUP"]
