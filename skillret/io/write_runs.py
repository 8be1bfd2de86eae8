"""Run writers by extension: TREC, Parquet (the canonical run) or JSON (one query a line).

Written in pieces of whole queries, so a run computed chunk by chunk is never held whole; the
same run gives the same bytes however it was cut. TREC leaves out empty rankings and refuses ids
holding whitespace. Write inside `atomic_path` so a failure leaves nothing behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.runs import RunChunk
from skillret.io.write_canonical import CanonicalWriter, canonical_table
from skillret.errors import InputError

TREC_SUFFIXES = (".trec", ".txt", ".run")
PARQUET_SUFFIXES = (".parquet", ".pq")
JSON_SUFFIXES = (".json",)
WRITABLE = "TREC (.trec, .txt, .run), Parquet (.parquet, .pq) or JSON (.json)"


def run_format(path: str | os.PathLike) -> str:
    """`trec`, `parquet` or `json` from the extension; else InputError."""
    suffix = Path(path).suffix.lower()
    for fmt, suffixes in (("trec", TREC_SUFFIXES), ("parquet", PARQUET_SUFFIXES),
                          ("json", JSON_SUFFIXES)):
        if suffix in suffixes:
            return fmt
    raise InputError(path, f"cannot write a run as {suffix or 'a file without extension'}",
                     hint=f"write {WRITABLE}")


def open_writer(target: str | os.PathLike, tmp: str | os.PathLike, *, tag: str = "skillret"):
    """A writer for `target`'s format, writing to `tmp` (messages name `target`)."""
    fmt = run_format(target)
    if fmt == "trec":
        return TrecWriter(target, tmp, tag)
    if fmt == "parquet":
        return ParquetWriter(tmp)
    return JsonWriter(target, tmp)


class TrecWriter:
    def __init__(self, target, tmp, tag: str):
        self.target = target
        self.fh = open(tmp, "wb")
        if not tag or any(c.isspace() for c in tag):
            tag = "skillret"
        self.tag = tag + "\n"

    def write(self, queries, row_query, skill_id, score, rank, *, distinct_skills=None) -> None:
        """`distinct_skills`: `skill_id`'s distinct ids, if known (fewer to check)."""
        if not len(score):
            return
        for ids, what in ((queries, "query"), (skill_id if distinct_skills is None
                                               else distinct_skills, "skill")):
            if not trec_safe(ids):
                raise InputError(self.target, f"a {what} id is empty or holds whitespace, "
                                              "which TREC cannot carry",
                                 hint="write .parquet or .json instead")
        query_id = arrow.take(queries, row_query)
        lines = pc.call_function("binary_join_element_wise", [
            query_id, arrow.scalar("Q0"), skill_id, pc.cast(arrow.indices(rank), pa.string()),
            pc.cast(_floats(score), pa.string()), arrow.scalar(self.tag), arrow.scalar(" ")])
        self.fh.write(_text(lines))

    def close(self) -> None:
        self.fh.close()


class ParquetWriter:
    def __init__(self, tmp):
        self._writer = CanonicalWriter(tmp)

    def write(self, queries, row_query, skill_id, score, rank, *, distinct_skills=None) -> None:
        chunk = RunChunk(queries=queries, row_query=row_query, skill_id=skill_id, score=score)
        self._writer.write(canonical_table(chunk, None, rank))

    def close(self) -> None:
        self._writer.close()


class JsonWriter:
    """`{"q1": {"s1": 2.5, "s2": 1}, "q2": {}}` with one query per line."""

    def __init__(self, target, tmp):
        self.target = target
        self.fh = open(tmp, "wb")
        self.fh.write(b"{")
        self.first = True

    def write(self, queries, row_query, skill_id, score, rank, *, distinct_skills=None) -> None:
        if not len(queries):
            return
        pairs = pc.call_function("binary_join_element_wise", [
            _json_strings(skill_id), pc.cast(_floats(score), pa.string()), arrow.scalar(": ")])
        offsets = np.zeros(len(queries) + 1, dtype=np.int32)
        np.cumsum(np.bincount(row_query, minlength=len(queries)), out=offsets[1:])
        per_query = pc.call_function("binary_join", [
            pa.ListArray.from_arrays(arrow.from_numpy(offsets), pairs), arrow.scalar(", ")])
        lines = pc.call_function("binary_join_element_wise", [
            arrow.scalar(",\n  "), _json_strings(queries), arrow.scalar(": {"), per_query,
            arrow.scalar("}"), arrow.scalar("")])
        text = _text(lines)
        self.fh.write(text[1:] if self.first else text)  # no comma before the first query
        self.first = False

    def close(self) -> None:
        self.fh.write(b"{}\n" if self.first else b"\n}\n")
        self.fh.close()


_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True  # what TREC readers split fields on


def trec_safe(ids: pa.Array) -> bool:
    """No id is null, empty or holds ASCII whitespace."""
    if not len(ids):
        return True
    if ids.null_count:
        return False
    width = np.int64 if pa.types.is_large_string(ids.type) else np.int32
    offsets = np.frombuffer(ids.buffers()[1], dtype=width, count=len(ids) + 1,
                            offset=ids.offset * np.dtype(width).itemsize)
    if (offsets[1:] == offsets[:-1]).any():  # an empty id
        return False
    data = np.frombuffer(ids.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
    return not _WHITESPACE[data].any()


def _json_strings(values: pa.Array) -> pa.Array:
    """Each string as a JSON literal (escaped only where JSON requires it)."""
    special = pc.call_function("match_substring_regex", [values],
                               pc.MatchSubstringOptions('["\\\\\\x00-\\x1f]'))
    quoted = pc.call_function("binary_join_element_wise",
                              [arrow.scalar('"'), values, arrow.scalar('"'), arrow.scalar("")])
    if not pc.any(special).as_py():
        return quoted
    rows = np.flatnonzero(arrow.to_numpy(special))
    escaped = [json.dumps(v, ensure_ascii=False) for v in arrow.take(values, rows).to_pylist()]
    out = quoted.to_pylist()  # rare
    for row, text in zip(rows.tolist(), escaped):
        out[row] = text
    return arrow.strings(out)


def _floats(score) -> pa.Array:
    return arrow.from_numpy(np.asarray(score, dtype=np.float64))


def _text(values: pa.Array):
    """The concatenated bytes of a string array (no copy)."""
    if values.type != pa.large_string():
        values = pc.cast(values, pa.large_string())
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64, count=len(values) + 1,
                            offset=values.offset * 8)
    data = values.buffers()[2]
    if data is None:
        return b""
    return memoryview(data)[offsets[0]:offsets[-1]]
