"""Run writers by extension: TREC, Parquet (the canonical run) or JSON (one query a line).

The canonical run (`validate --normalized`, the pipeline's run format) is Parquet with
query_id, skill_id, score, rank; queries in run order, results in tie-rule order; an empty
ranking is one row with nulls.

Written in pieces of whole queries, so a run computed chunk by chunk is never held whole; the
same run gives the same bytes however it was cut. TREC leaves out empty rankings and refuses ids
holding whitespace. Write inside `atomic_path` so a failure leaves nothing behind.
"""

from __future__ import annotations

import os
from json.encoder import encode_basestring as _quoted  # a JSON string literal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.runs import RunChunk
from skillret.errors import InputError

_FORMATS = {".trec": "trec", ".txt": "trec", ".run": "trec", ".parquet": "parquet",
            ".pq": "parquet", ".json": "json"}
WRITABLE = "TREC (.trec, .txt, .run), Parquet (.parquet, .pq) or JSON (.json)"


def run_format(path: str | os.PathLike) -> str:
    """`trec`, `parquet` or `json` from the extension; else InputError."""
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        raise InputError(path, f"cannot write a run as {suffix or 'a file without extension'}",
                         hint=f"write {WRITABLE}")
    return _FORMATS[suffix]


class open_writer:  # noqa: N801 - used like a function: writer = open_writer(target, tmp)
    """A writer for `target`'s format, writing to `tmp` (messages name `target`). JSON is
    `{"q1": {"s1": 2.5, "s2": 1}, "q2": {}}` with one query per line."""

    def __init__(self, target: str | os.PathLike, tmp: str | os.PathLike, *,
                 tag: str = "skillret"):
        self.target, self.fmt, self.first = target, run_format(target), True
        self.tag = (tag if tag and not any(c.isspace() for c in tag) else "skillret") + "\n"
        self.fh = CanonicalWriter(tmp) if self.fmt == "parquet" else open(tmp, "wb")
        if self.fmt == "json":
            self.fh.write(b"{")

    def write(self, queries, row_query, skill_id, score, rank, *, distinct_skills=None) -> None:
        """`distinct_skills`: `skill_id`'s distinct ids, if known (fewer to check)."""
        if self.fmt == "parquet":
            chunk = RunChunk(queries=queries, row_query=row_query, skill_id=skill_id, score=score)
            self.fh.write(canonical_table(chunk, None, rank))
        elif self.fmt == "trec":
            self._trec(queries, row_query, skill_id, score, rank, distinct_skills)
        elif len(queries):
            self._json(queries, row_query, skill_id, score)

    def _trec(self, queries, row_query, skill_id, score, rank, distinct_skills) -> None:
        if not len(score):
            return
        for ids, what in ((queries, "query"), (skill_id if distinct_skills is None
                                               else distinct_skills, "skill")):
            # null, empty or holding ASCII whitespace (what TREC readers split fields on)
            unsafe = pc.call_function("match_substring_regex", [ids],
                                      pc.MatchSubstringOptions(r"^$|[\t\n\v\f\r ]"))
            if ids.null_count or pc.any(unsafe).as_py():
                raise InputError(self.target, f"a {what} id is empty or holds whitespace, "
                                              "which TREC cannot carry",
                                 hint="write .parquet or .json instead")
        query_id = arrow.take(queries, row_query)
        lines = pc.call_function("binary_join_element_wise", [
            query_id, arrow.scalar("Q0"), skill_id, pc.cast(arrow.indices(rank), pa.string()),
            pc.cast(_floats(score), pa.string()), arrow.scalar(self.tag), arrow.scalar(" ")])
        self.fh.write(_text(lines))

    def _json(self, queries, row_query, skill_id, score) -> None:
        values = pc.cast(_floats(score), pa.string()).to_pylist()
        pairs = [f"{_quoted(s)}: {v}" for s, v in zip(skill_id.to_pylist(), values)]
        ends = np.cumsum(np.bincount(row_query, minlength=len(queries))).tolist()
        text = "".join(f",\n  {_quoted(q)}: {{{', '.join(pairs[start:end])}}}"
                       for q, start, end in zip(queries.to_pylist(), [0, *ends], ends))
        self.fh.write((text[1:] if self.first else text).encode())  # no comma before the first
        self.first = False

    def close(self) -> None:
        if self.fmt == "json":
            self.fh.write(b"}\n" if self.first else b"\n}\n")
        self.fh.close()


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
        self._pending: pa.Table | None = None

    def write(self, table: pa.Table) -> None:
        pending = table if self._pending is None else pa.concat_tables([self._pending, table])
        full = pending.num_rows - pending.num_rows % CANONICAL_ROW_GROUP
        if full:  # one contiguous chunk: pages then do not depend on how the run was cut
            self._write(pending.slice(0, full))
        self._pending = pending.slice(full)

    def _write(self, table: pa.Table) -> None:
        self._writer.write_table(table.combine_chunks(), row_group_size=CANONICAL_ROW_GROUP)

    def close(self) -> None:
        try:
            if self._pending is not None and self._pending.num_rows:
                self._write(self._pending)
        finally:
            self._writer.close()


CANONICAL_SCHEMA = pa.schema([("query_id", pa.string()), ("skill_id", pa.string()),
                               ("score", pa.float64()), ("rank", pa.int64())])


def _floats(score) -> pa.Array:
    return arrow.from_numpy(np.asarray(score, dtype=np.float64))


def _text(values: pa.Array):
    """The concatenated bytes of a string array (no copy)."""
    values = pc.cast(values, pa.large_string())
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64, count=len(values) + 1,
                            offset=values.offset * 8)
    data = values.buffers()[2]
    return b"" if data is None else memoryview(data)[offsets[0]:offsets[-1]]
