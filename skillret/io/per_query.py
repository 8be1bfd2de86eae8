"""Tables the pipeline writes (per-query values, canonical qrels) and reads back: TSV or Parquet
by extension; deterministic and atomic, so the same content always gives the same bytes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from skillret.columnar import arrow
from skillret.errors import InputError
from skillret.io.atomic import atomic_path

_PARQUET = (".parquet", ".pq")


@dataclass
class PerQuery:
    """One run's per-query values: query ids (sorted, unique) and one array per metric."""

    query_ids: np.ndarray
    values: dict[str, np.ndarray]
    source: str


def read_table(handle, metrics: list[str], source: str) -> PerQuery:
    """Parquet by `source`'s extension (.parquet, .pq), else TSV. InputError names a missing
    column or metric, a repeated id or an empty value."""
    try:
        if Path(source).suffix.lower() in _PARQUET:
            import pyarrow.parquet as pq  # heavy: only for Parquet
            table = pq.read_table(handle)
        else:
            table = pacsv.read_csv(handle, parse_options=pacsv.ParseOptions(delimiter="\t"),
                                   convert_options=pacsv.ConvertOptions(
                                       column_types={"query_id": pa.string()}))
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(source, f"not a per-query table ({str(exc).splitlines()[0]})") from None
    names = table.column_names
    if "query_id" not in names:
        raise InputError(source, "not a per-query table: no query_id column")
    missing = [m for m in metrics if m not in names]
    if missing:
        have = [c for c in names if "@" in c]
        raise InputError(source, f"no per-query values of {', '.join(missing)} "
                                 f"(the table has {', '.join(have) or 'no metric'})",
                         hint="add a profile with it to eval.profiles and run dvc repro")
    ids = np.asarray(table.column("query_id").to_pylist(), dtype=object).astype(str)
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    if len(ids) > 1 and (ids[1:] == ids[:-1]).any():
        raise InputError(source, "a query id appears twice in the per-query table")
    values = {}
    for m in metrics:
        column = table.column(m)
        if column.null_count:
            raise InputError(source, f"column {m} has empty values")
        values[m] = np.asarray(arrow.to_numpy(column), dtype=np.float64)[order]
    return PerQuery(ids, values, source)


def read_table_file(path: str | os.PathLike, metrics: list[str]) -> PerQuery:
    if not os.path.isfile(path):
        raise InputError(path, "no such per-query table", hint="run dvc repro")
    return read_table(os.fspath(path), metrics, os.fspath(path))


def write_table(path: str | os.PathLike, columns: dict[str, object]) -> None:
    """A table as TSV (header, tab-separated, no quoting) or Parquet (by extension)."""
    table = pa.table({name: _arrow(values) for name, values in columns.items()})
    target = Path(path)
    with atomic_path(target) as tmp:
        if target.suffix.lower() in _PARQUET:
            import pyarrow.parquet as pq  # heavy: only for Parquet
            pq.write_table(table, tmp, compression="zstd")
        else:
            try:
                pacsv.write_csv(table, tmp, write_options=pacsv.WriteOptions(
                    delimiter="\t", quoting_style="none", quoting_header="none"))
            except pa.ArrowInvalid:
                raise InputError(target, "an id holds a tab, a quote or a newline, which TSV "
                                         "cannot carry", hint="write .parquet instead") from None


def _arrow(values) -> pa.Array:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    array = np.asarray(values)
    if array.dtype.kind == "O" or array.dtype.kind == "U":
        return arrow.strings(array.tolist())
    return arrow.from_numpy(array)

