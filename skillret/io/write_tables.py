"""Deterministic, atomic tables: the same content always gives the same bytes."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from skillret.columnar import arrow
from skillret.io.atomic import atomic_path
from skillret.errors import InputError
from skillret.columnar.qrels import Qrels

def write_table(path: str | os.PathLike, columns: dict[str, object]) -> None:
    """A table as TSV (header, tab-separated, no quoting) or Parquet (by extension)."""
    table = pa.table({name: _arrow(values) for name, values in columns.items()})
    target = Path(path)
    with atomic_path(target) as tmp:
        if target.suffix.lower() in (".parquet", ".pq"):
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


def write_qrels(path: str | os.PathLike, qrels: Qrels) -> None:
    """Canonical qrels (sorted by query then skill, unique) as a table."""
    write_table(path, {"query_id": qrels.query_id, "skill_id": qrels.skill_id,
                       "relevance": qrels.relevance})
