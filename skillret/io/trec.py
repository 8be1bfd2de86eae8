"""TREC runs (`qid Q0 docid rank score tag`) and qrels (`qid iter docid grade`), split as
trec_eval splits them (`skillret.io.text`). Unlike trec_eval's `atof`, a score that is not a
finite number is an error, not a silent 0.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.convert import integral_grades
from skillret.errors import InputError
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import RowBatch
from skillret.io import text

RUN_LAYOUT = text.Layout(6, exact=False, expected="6 fields: qid Q0 skill_id rank score tag",
                         strings=(0, 2), numbers={4: "score"})
RANKED_RUN_LAYOUT = replace(RUN_LAYOUT, integers=(3,))
QRELS_LAYOUT = text.Layout(4, exact=True, expected="4 fields: qid iter skill_id grade",
                           strings=(0, 2), numbers={3: "grade"})


def run_batches(path: Path, *, with_rank: bool = False, **read) -> Iterator[RowBatch]:
    """Row batches of a TREC run in file order, one per block; InputError if it holds none.
    `read`: options of `text.read_fields` (`block_size`)."""
    rows = 0
    for fields in text.read_fields(path, RANKED_RUN_LAYOUT if with_rank else RUN_LAYOUT, **read):
        if not len(fields.line):
            continue
        rows += len(fields.line)
        yield RowBatch(fields.columns[0], fields.columns[2], fields.columns[4], fields.line,
                       fields.columns.get(3), ends_query=fields.ends_group,
                       extra_fields=fields.extra)
    if not rows:
        raise InputError(path, "holds no results (only blank or comment lines)")


def qrels_batches(path: Path, **read) -> Iterator[tuple]:
    """(query ids, skill ids, grades, line numbers) of a TREC qrels file, block by block;
    `read` as for `run_batches`."""
    for fields in text.read_fields(path, QRELS_LAYOUT, **read):
        if len(fields.line):
            grades = integral_grades(fields.columns[3], source=str(path), lines=fields.line)
            yield fields.columns[0], fields.columns[2], grades, fields.line


#: Rows held before exact repeats are dropped (then twice the rows kept: O(log n) passes).
COMPACT_ROWS = 1 << 21


def read_qrels(path: Path, *, block_size: int = text.BLOCK_SIZE) -> Qrels:
    """Judgments of a TREC qrels file. Exact repeats are dropped as they pile up (a small gzip
    repeating a line by the GB stays small) and counted as duplicates."""
    parts, rows, repeats, limit = [], 0, 0, COMPACT_ROWS
    for part in qrels_batches(path, block_size=block_size):
        parts.append(part)
        rows += len(part[2])
        if rows > limit:
            parts = [_concat(parts)]
            kept = _first_of_repeats(*parts[0][:3])
            if kept is not None:
                repeats += rows - len(kept)
                parts = [tuple(column.take(kept) if isinstance(column, pa.Array)
                               else column[kept] for column in parts[0])]
            rows = len(parts[0][2])
            limit = max(limit, 2 * rows)
    if not parts:
        raise InputError(path, "holds no judgments (only blank or comment lines)")
    qids, sids, grades, numbers = _concat(parts)
    qrels = Qrels.from_columns(qids, sids, grades, source=str(path), lines=numbers)
    return replace(qrels, duplicates=qrels.duplicates + repeats) if repeats else qrels


def _concat(parts: list) -> tuple:
    qids, sids, grades, numbers = zip(*parts)
    return (pa.chunked_array(qids, pa.string()).combine_chunks(),
            pa.chunked_array(sids, pa.string()).combine_chunks(), np.concatenate(grades),
            np.concatenate(numbers))


def _first_of_repeats(qids: pa.Array, sids: pa.Array, grades: np.ndarray) -> np.ndarray | None:
    """Sorted positions of each distinct (query, skill, grade)'s first row; None when no row
    repeats (or the key would overflow int64)."""
    codes, sizes = [], []
    for column in (qids, sids, arrow.from_numpy(np.asarray(grades, dtype=np.int64))):
        encoded = pc.dictionary_encode(column)
        codes.append(arrow.to_numpy(encoded.indices).astype(np.int64))
        sizes.append(len(encoded.dictionary))
    if sizes[0] * sizes[1] * sizes[2] >= 1 << 62:  # then rows are few per id anyway
        return None
    key = (codes[0] * sizes[1] + codes[1]) * sizes[2] + codes[2]
    _, first = np.unique(key, return_index=True)
    if len(first) == len(key):
        return None
    return np.sort(first)
