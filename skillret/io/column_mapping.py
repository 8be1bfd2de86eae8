"""Tables (CSV/TSV, JSON lines, Parquet, DataFrames) into runs and qrels, by column role."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.convert import check_finite, integral_grades
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import RowBatch, Run
from skillret.io import table_files as tabular


def run_from_table(table: pa.Table, *, source: str | None, lines=None,
                   columns: dict | None = None) -> Run:
    return Run.from_batches([rows_from_table(table, source=source, lines=lines,
                                             columns=columns)], source=source)


def rows_from_table(table: pa.Table | pa.RecordBatch, *, source: str | None, lines=None,
                    columns: dict | None = None, names: dict | None = None) -> RowBatch:
    """A row with neither skill nor score marks a query that retrieved nothing."""
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
        empty = arrow.to_numpy(marker)
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
                try:  # a score? (validation says so)
                    rank_col = pc.cast(rank_col, pa.float64())
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    pass  # informative only, as in trec_eval
        if pa.types.is_integer(rank_col.type) and not rank_col.null_count:
            rank = arrow.to_numpy(rank_col).astype(np.int64)
        elif pa.types.is_floating(rank_col.type) and not rank_col.null_count:
            rank = arrow.to_numpy(rank_col).astype(np.float64)
    return RowBatch(query_col, skill, score, None if lines is None else np.asarray(lines), rank,
                    empty)


def _as_table(table) -> pa.Table:
    return table if isinstance(table, pa.Table) else pa.Table.from_batches([table])


def _scatter_strings(values: pa.Array, where: np.ndarray) -> pa.Array:
    """A string array of len(where): `values` at the True positions, "" elsewhere."""
    index = np.full(len(where), len(values), dtype=np.int64)
    index[where] = np.arange(len(values))
    return arrow.take(pa.concat_arrays([values, arrow.strings([""])]), index)


def parquet_batches(path: Path, *, columns: dict | None = None, with_rank: bool = False,
                    batch_rows: int = 1 << 18) -> Iterator[RowBatch]:
    """A Parquet run in row batches."""
    import pyarrow.parquet as pq  # heavy: only for Parquet

    unreadable = (pa.ArrowException, OSError, UnicodeDecodeError)
    try:
        parquet = pq.ParquetFile(path)
        available = parquet.schema_arrow.names
    except unreadable as exc:
        tabular.unreadable_parquet(path, exc)
    names = tabular.resolve_columns(path, available, ("query", "skill", "score"), columns,
                                    optional=("rank",))
    if not with_rank:
        names.pop("rank", None)
    batches = parquet.iter_batches(batch_size=batch_rows, columns=list(names.values()))
    while True:
        try:  # a corrupt page shows only when it is read
            batch = next(batches, None)
        except unreadable as exc:
            tabular.unreadable_parquet(path, exc)
        if batch is None:
            return
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
