"""Readers: every format researchers have, into one canonical form.

``read_run`` / ``read_qrels`` take a path (format by extension and content, ``fmt`` overrides);
``load_run`` / ``load_qrels`` also take what the Python API accepts: pytrec_eval-style dicts,
pandas DataFrames, or already-loaded :class:`~skillret.runs.Run` /
:class:`~skillret.judgments.Qrels`.
Ids stay strings exactly as written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import arrow
from ..convert import check_finite, integral_grades
from ..errors import InputError
from ..judgments import Qrels
from ..runs import RowBatch, Run
from . import documents, tabular, trec
from .sniff import QRELS_FORMATS, RUN_FORMATS, check_file, detect

__all__ = ["RunSource", "open_run", "read_run", "read_qrels", "load_run", "load_qrels",
           "run_input",
           "RUN_FORMATS", "QRELS_FORMATS", "parse_columns"]


@dataclass
class RunSource:
    """A run file, its format, and how to read it: streamed (TREC) or whole."""

    path: Path
    fmt: str
    split: str | None = None
    columns: dict | None = None
    block_size: int = trec.text.BLOCK_SIZE

    @property
    def source(self) -> str:
        """The path, as messages name it (a :class:`~skillret.runs.Run` has ``source`` too)."""
        return str(self.path)

    @property
    def streamable(self) -> bool:
        return self.fmt in ("trec", "parquet")

    def batches(self, *, with_rank: bool = False) -> Iterator[RowBatch]:
        if self.fmt == "trec":
            return trec.run_batches(self.path, with_rank=with_rank, block_size=self.block_size)
        if self.fmt == "parquet":
            return parquet_batches(self.path, columns=self.columns, with_rank=with_rank)
        raise ValueError(f"{self.fmt} runs are read whole, not streamed")

    def read(self, *, with_rank: bool = False) -> Run:
        if self.streamable:
            return Run.from_batches(self.batches(with_rank=with_rank),
                                    source=str(self.path))
        if self.fmt in ("json", "skillret-json"):
            return documents.read_json_run(self.path, split=self.split,
                                           layout=self.fmt if self.fmt != "json" else None)
        table, lines = tabular.read_table(self.path, self.fmt)
        return run_from_table(table, source=str(self.path), lines=lines, columns=self.columns)


def open_run(path: str | os.PathLike, *, fmt: str | None = None, split: str | None = None,
             columns: dict | None = None, block_size: int = trec.text.BLOCK_SIZE) -> RunSource:
    """A run file, ready to be read (``block_size``: bytes a TREC file is read in at a time)."""
    p = Path(path)
    return RunSource(p, detect(p, kind="run", fmt=fmt), split=split, columns=columns,
                     block_size=block_size)


def read_run(path: str | os.PathLike, *, fmt: str | None = None, split: str | None = None,
             columns: dict | None = None, with_rank: bool = False) -> Run:
    return open_run(path, fmt=fmt, split=split, columns=columns).read(with_rank=with_rank)


def read_qrels(path: str | os.PathLike, *, fmt: str | None = None, split: str | None = None,
               columns: dict | None = None) -> Qrels:
    """Judgments from a file in any supported format; a file without one is an error."""
    p = Path(path)
    kind = detect(p, kind="qrels", fmt=fmt)
    if kind == "skillret-dir":
        if not p.is_dir():
            raise InputError(p, "is not a directory")
        p, kind = documents.skillret_dir_qrels(p, split)
        check_file(p)
    if kind == "trec":
        qrels = trec.read_qrels(p)
    elif kind == "json":
        qrels = documents.read_json_qrels(p)
    elif kind == "queries-jsonl":
        qrels = documents.read_queries_jsonl(p)
    else:
        table, lines = tabular.read_table(p, kind)
        qrels = qrels_from_table(table, source=str(p), lines=lines, columns=columns)
    if not len(qrels):
        raise InputError(p, "holds no judgments", hint="a qrels file lists (query, skill, "
                                                        "grade) judgments")
    return qrels


# ---------------------------------------------------------------------- tables -> canonical
def run_from_table(table: pa.Table, *, source: str | None, lines=None,
                   columns: dict | None = None) -> Run:
    return Run.from_batches([rows_from_table(table, source=source, lines=lines,
                                             columns=columns)], source=source)


def rows_from_table(table: pa.Table | pa.RecordBatch, *, source: str | None, lines=None,
                    columns: dict | None = None, names: dict | None = None) -> RowBatch:
    """Rows of a table (query, skill, score, optional rank); a row with neither skill nor score
    marks a query that retrieved nothing."""
    path = Path(source) if source else None
    if names is None:
        names = tabular.resolve_columns(path, table.column_names, ("query", "skill", "score"),
                                        columns, optional=("rank",))
    query_col = tabular.column_strings(path, table, names["query"], lines)
    skill_col = tabular.column(table, names["skill"])
    score_col = tabular.column(table, names["score"])
    empty = None
    marker = pc.and_(pc.is_null(skill_col), pc.is_null(score_col))
    if pc.any(marker).as_py():
        empty = marker.to_numpy(zero_copy_only=False)
        kept = arrow.filter(_as_table(table), pc.invert(marker))
        kept_lines = None if lines is None else np.asarray(lines)[~empty]
        skill = _scatter_strings(tabular.column_strings(path, kept, names["skill"], kept_lines),
                                 ~empty)
        score = np.zeros(len(empty), dtype=np.float64)
        score[~empty] = tabular.column_numbers(path, kept, names["score"], kept_lines, "score")
        check_finite(score[~empty], source=source, lines=kept_lines)
    else:
        skill = tabular.column_strings(path, table, names["skill"], lines)
        score = tabular.column_numbers(path, table, names["score"], lines,
                                       "score").astype(np.float64)
        check_finite(score, source=source, lines=lines)
    rank = None
    if "rank" in names:
        rank_col = tabular.column(table, names["rank"])
        if pa.types.is_string(rank_col.type) or pa.types.is_large_string(rank_col.type):
            try:  # CSV/TSV columns are read as text
                rank_col = pc.cast(rank_col, pa.int64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass  # not integers: informative only, ignored like trec_eval ignores it
        if pa.types.is_integer(rank_col.type) and not rank_col.null_count:
            rank = rank_col.to_numpy(zero_copy_only=False).astype(np.int64)
    return RowBatch(query_col, skill, score, None if lines is None else np.asarray(lines), rank,
                    empty)


def _as_table(table) -> pa.Table:
    return table if isinstance(table, pa.Table) else pa.Table.from_batches([table])


def _scatter_strings(values: pa.Array, where: np.ndarray) -> pa.Array:
    """A string array of len(where): ``values`` at the True positions, "" elsewhere."""
    index = np.full(len(where), len(values), dtype=np.int64)
    index[where] = np.arange(len(values))
    return arrow.take(pa.concat_arrays([values, pa.array([""], pa.string())]), index)


def parquet_batches(path: Path, *, columns: dict | None = None, with_rank: bool = False,
                    batch_rows: int = 1 << 18) -> Iterator[RowBatch]:
    """A Parquet run, streamed in row batches (the canonical run is query-contiguous)."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(path, f"is not a readable Parquet file ({str(exc).splitlines()[0]})"
                         ) from None
    names = tabular.resolve_columns(path, parquet.schema_arrow.names, ("query", "skill", "score"),
                                    columns, optional=("rank",))
    if not with_rank:
        names.pop("rank", None)
    for batch in parquet.iter_batches(batch_size=batch_rows, columns=list(names.values())):
        yield rows_from_table(batch, source=str(path), names=names)


def qrels_from_table(table: pa.Table, *, source: str | None, lines=None,
                     columns: dict | None = None) -> Qrels:
    path = Path(source) if source else None
    names = tabular.resolve_columns(path, table.column_names, ("query", "skill", "relevance"),
                                    columns)
    query_col = tabular.column_strings(path, table, names["query"], lines)
    skill_col = tabular.column_strings(path, table, names["skill"], lines)
    grades = tabular.column_numbers(path, table, names["relevance"], lines, "grade")
    grades = integral_grades(grades, source=source, lines=lines)
    return Qrels.from_columns(query_col, skill_col, grades, source=source,
                              lines=None if lines is None else np.asarray(lines))


# ---------------------------------------------------------------------- the Python API's inputs
def _is_dataframe(obj) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


def load_run(obj, *, fmt: str | None = None, split: str | None = None,
             columns: dict | None = None) -> Run:
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, dict):
        return Run.from_dict(obj)
    if _is_dataframe(obj):
        return run_from_table(pa.Table.from_pandas(obj, preserve_index=False), source=None,
                              columns=columns)
    if isinstance(obj, pa.Table):
        return run_from_table(obj, source=None, columns=columns)
    if isinstance(obj, (str, os.PathLike)):
        return read_run(obj, fmt=fmt, split=split, columns=columns)
    raise TypeError(f"a run is a path, a {{query: {{skill: score}}}} dict or a DataFrame, "
                    f"not {type(obj).__name__}")


def run_input(obj, *, fmt: str | None = None, split: str | None = None,
              columns: dict | None = None) -> Run | RunSource:
    """A run as scoring and validation consume it: a path becomes a :class:`RunSource`
    (streamed when its format allows), a loaded run or source stays as is, and anything else
    :func:`load_run` accepts is loaded."""
    if isinstance(obj, (Run, RunSource)):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return open_run(obj, fmt=fmt, split=split, columns=columns)
    return load_run(obj, columns=columns)


def load_qrels(obj, *, fmt: str | None = None, split: str | None = None,
               columns: dict | None = None) -> Qrels:
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, dict):
        return Qrels.from_dict(obj)
    if _is_dataframe(obj):
        return qrels_from_table(pa.Table.from_pandas(obj, preserve_index=False), source=None,
                                columns=columns)
    if isinstance(obj, pa.Table):
        return qrels_from_table(obj, source=None, columns=columns)
    if isinstance(obj, (str, os.PathLike)):
        return read_qrels(obj, fmt=fmt, split=split, columns=columns)
    raise TypeError(f"qrels are a path, a {{query: {{skill: grade}}}} dict or a DataFrame, "
                    f"not {type(obj).__name__}")


def parse_columns(spec: str | None) -> dict | None:
    """``query=qid,skill=docno,score=sim`` (or ``qid,docno,sim`` in role order) -> mapping."""
    if not spec:
        return None
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if all("=" in p for p in parts):
        out = dict(p.split("=", 1) for p in parts)
        unknown = set(out) - set(tabular.DEFAULT_COLUMNS)
        if unknown:
            raise InputError(None, f"--columns: unknown role(s) {', '.join(sorted(unknown))}",
                             hint="roles: query, skill, score, relevance, rank")
        return out
    if len(parts) == 3:
        return {"query": parts[0], "skill": parts[1], "score": parts[2],
                "relevance": parts[2]}
    raise InputError(None, f"--columns {spec!r}: give query=NAME,skill=NAME,score=NAME")
