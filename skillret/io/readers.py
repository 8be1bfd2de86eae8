"""Readers: every supported format into one canonical form.

`open_run` turns a path into a `RunSource` (streamed for TREC and Parquet) and a dict,
DataFrame, Arrow table or `Run` into a `Run`; `read_qrels` does the same for judgments.
Ids stay strings exactly as written.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterator

import pyarrow as pa

from skillret import limits
from skillret.errors import SHOWN_AS, InputError
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import RowBatch, Run, RunChunk, chunk_batches
from skillret.io import documents, text
from skillret.io.prefetch import prefetch
from skillret.io.sniff import (check_file, decode_utf8, detect, is_queries, json_objects,
                               looks_like, read_bytes)
from skillret.io.streams import readable
from skillret.io.table_files import (parquet_batches, parse_columns, qrels_from_table, read_table,
                                     rows_from_table)

__all__ = ["RunSource", "open_run", "read_qrels", "run_name", "parse_columns"]

_NOT_PLAIN = re.compile(r"[^A-Za-z0-9._-]+")


def run_name(path: str | os.PathLike) -> str:
    """The run's name in every command: `runs/bm25.k1.TREC.GZ` -> `bm25.k1` (`.gz` in any
    case and the last extension dropped, characters other than `[A-Za-z0-9._-]` -> `-`)."""
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem = Path(name).stem or name
    return _NOT_PLAIN.sub("-", stem).replace("..", ".").strip(".-_") or "run"


@dataclass
class RunSource:
    """A run file and its format; `block_size`: bytes of a TREC file read at a time."""

    path: Path
    fmt: str
    split: str | None = None
    columns: dict | None = None
    block_size: int = text.BLOCK_SIZE
    _ahead: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def source(self) -> str:
        """The path as messages name it (a stream's copy by its given name)."""
        return SHOWN_AS.get(str(self.path), str(self.path))

    @property
    def in_batches(self) -> bool:
        """TREC and Parquet stream; the others are read whole."""
        return self.fmt in ("trec", "parquet")

    def chunks(self, *, with_rank: bool = False,
               max_results: int | None = None) -> Iterator[RunChunk]:
        """Chunks of whole queries in run order; InputError for a query with more than
        `max_results` (default: the limit). A streamed file raises `NotGrouped` when a query's
        rows start again. Close the iterator if it is not read to its end.
        """
        cap = limits.current().results_per_query if max_results is None else max_results
        if not self.in_batches:
            yield from self.read(with_rank=with_rank).chunks(max_results=cap)
            return
        with contextlib.closing(self.batches(with_rank=with_rank)) as batches, \
                swapped_hints(self.path, "run"):
            yield from chunk_batches(batches, source=self.source, max_results=cap)

    def read_ahead(self, *, with_rank: bool = False) -> "RunSource":
        """A copy already reading its batches in the background (overlapping, e.g., the qrels
        load); the first `batches` call with the same `with_rank` takes them over. Formats read
        whole return self. Close it (or use `with`) so an unused read-ahead stops."""
        if not self.in_batches:
            return self
        return replace(self, _ahead=(with_rank, prefetch(self._batches(with_rank))))

    def close(self) -> None:
        """Stop an unused read-ahead and wait for its thread (none may stay in pyarrow at
        exit)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead[1].close()

    def __enter__(self) -> "RunSource":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def batches(self, *, with_rank: bool = False) -> prefetch:
        """Row batches in file order, read in the background; close them if unfinished."""
        if self._ahead is not None and self._ahead[0] == with_rank:
            ahead, self._ahead = self._ahead[1], None
            return ahead
        self.close()
        return prefetch(self._batches(with_rank))

    def _batches(self, with_rank: bool) -> Iterator[RowBatch]:
        """Only formats `in_batches` get here (every caller checks)."""
        if self.fmt == "trec":
            return text.run_batches(self.path, with_rank=with_rank, block_size=self.block_size)
        return parquet_batches(self.path, columns=self.columns, with_rank=with_rank)

    def read(self, *, with_rank: bool = False) -> Run:
        """The whole run in memory."""
        with swapped_hints(self.path, "run"):
            if self.in_batches:
                with contextlib.closing(self.batches(with_rank=with_rank)) as batches:
                    return named(Run.from_batches(batches, source=self.source))
            if self.fmt in ("json", "skillret-json"):
                return named(documents.run_from_document(
                    documents.load_json(self.path), self.path, split=self.split,
                    layout=None if self.fmt == "json" else self.fmt))
            table, lines = read_table(self.path, self.fmt)
            rows = rows_from_table(table, source=self.source, lines=lines, columns=self.columns)
            return named(Run.from_batches([rows], source=self.source))


def _table(obj, kind: str, expected: str) -> pa.Table:
    """A list of records (one dict a row), DataFrame or Arrow table as a table; TypeError
    naming what is `expected` for anything else."""
    if type(obj).__name__ == "DataFrame" and hasattr(obj, "columns"):
        return pa.Table.from_pandas(obj, preserve_index=False)
    if isinstance(obj, (pa.Table, pa.RecordBatch)):
        return obj
    if not isinstance(obj, list):
        raise TypeError(f"{expected}, not {type(obj).__name__}")
    if not obj:
        raise InputError(None, f"the {kind} is an empty list")
    bad = next((i for i, r in enumerate(obj) if not isinstance(r, dict)), None)
    if bad is not None:
        raise InputError(None, f"{kind} record {bad + 1} is {type(obj[bad]).__name__}, "
                               f"not a mapping", hint="records are one dict per row, e.g. "
                                                      "{'query_id': ..., 'skill_id': ...}")
    try:
        return pa.Table.from_pylist(obj)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(None, f"the {kind} records do not make a table "
                               f"({str(exc).splitlines()[0]})",
                         hint="give every record the same fields with the same types") from None


def open_run(obj, *, fmt: str | None = None, split: str | None = None,
             columns: dict | None = None, block_size: int = text.BLOCK_SIZE) -> Run | RunSource:
    """A `Run` or `RunSource` from a path, dict, list of records, DataFrame or Arrow table."""
    if isinstance(obj, (Run, RunSource)):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        p = Path(readable(obj))
        return RunSource(p, detect(p, kind="run", fmt=fmt), split=split, columns=columns,
                         block_size=block_size)
    if isinstance(obj, dict):
        if fmt == "skillret-json" or documents.is_results_layout(obj):
            return documents.run_from_document(obj, None, split=split, layout="skillret-json")
        return Run.from_dict(obj)
    table = _table(obj, "run", "a run is a path, a {query: {skill: score}} dict, SkillRet's "
                               "results dict, a list of records or a DataFrame")
    return Run.from_batches([rows_from_table(table, source=None, columns=columns)], source=None)


def read_qrels(obj, *, fmt: str | None = None, split: str | None = None,
               columns: dict | None = None) -> Qrels:
    """Judgments from anything; InputError for a file holding none."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, dict):
        if documents.is_results_layout(obj):
            raise InputError(None, "the qrels are SkillRet's results (a run: 'retrieval' maps "
                                   "splits to rankings), not judgments",
                             hint="were the qrels and the run given the other way round? "
                                  "evaluate(qrels, run)")
        return Qrels.from_dict(obj)
    # JSON lines as records: SkillRet's queries, or rows
    if isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj) and \
            is_queries(obj[0]):
        return documents.qrels_from_queries(enumerate(obj, 1), None)
    if not isinstance(obj, (str, os.PathLike)):
        table = _table(obj, "qrels", "qrels are a path, a {query: {skill: grade}} dict, a list "
                                     "of records or a DataFrame")
        return qrels_from_table(table, source=None, columns=columns)
    p = Path(readable(obj))
    with swapped_hints(p, "qrels"):
        kind = detect(p, kind="qrels", fmt=fmt)
        if kind == "skillret-dir":
            if not p.is_dir():
                raise InputError(p, "is not a directory")
            p, kind = documents.skillret_dir_qrels(p, split)
            check_file(p)
        if kind == "trec":
            qrels = text.read_qrels(p)
        elif kind == "json":
            qrels = documents.read_json_qrels(p)
        elif kind == "queries-jsonl":
            qrels = documents.qrels_from_queries(json_objects(p, decode_utf8(p, read_bytes(p))), p)
        else:
            table, lines = read_table(p, kind)
            qrels = qrels_from_table(table, source=str(p), lines=lines, columns=columns)
        if not len(qrels):
            raise InputError(p, "holds no judgments", hint="a qrels file lists (query, skill, "
                                                            "grade) judgments")
        return named(qrels)


def named(data):
    """`data` with a stream copy's `source` replaced by the stream's name."""
    if getattr(data, "source", None) in SHOWN_AS:
        object.__setattr__(data, "source", SHOWN_AS[data.source])
    return data


@contextlib.contextmanager
def swapped_hints(path, kind: str):
    """Add a "given the other way round?" hint to input errors of a file that looks like the
    other kind (a run given as qrels, or qrels as a run)."""
    try:
        yield
    except InputError as exc:
        if looks_like(path) == ("qrels" if kind == "run" else "run"):
            hint = (f"this file looks like {'qrels' if kind == 'run' else 'a run'}, not "
                    f"{'a run' if kind == 'run' else 'qrels'}: were the qrels and the run given "
                    f"the other way round? give --qrels QRELS --run RUN")
            if hint not in (exc.hint or ""):  # after the hint it has
                exc.hint = f"{exc.hint}; {hint}" if exc.hint else hint
        raise
