"""TREC runs (``qid Q0 docid rank score tag``) and qrels (``qid iter docid grade``).

Runs are read as trec_eval reads them: whitespace-separated, blank lines and ``#`` comments
skipped, anything after the run tag ignored, the rank column ignored for scoring. Unlike
trec_eval's ``atof``, a score that is not a finite number is an error, not a silent 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa

from .. import arrow as pc
from ..convert import check_finite, integral_grades
from ..errors import InputError
from ..judgments import Qrels
from ..runs import RowBatch
from . import text

RUN_FIELDS = "6 fields: qid Q0 skill_id rank score tag"
QRELS_FIELDS = "4 fields: qid iter skill_id grade"


def run_batches(path: Path, *, with_rank: bool = False,
                stats: dict | None = None) -> Iterator[RowBatch]:
    """Row batches of a TREC run in file order (streamed; gzip is fine).

    ``stats`` (optional) receives ``extra_fields``: lines with fields after the tag.
    """
    rows = 0
    for batch in _run_batches(path, with_rank, stats):
        rows += len(batch)
        yield batch
    if not rows:
        raise InputError(path, "holds no results (only blank or comment lines)")


def _run_batches(path: Path, with_rank: bool, stats: dict | None) -> Iterator[RowBatch]:
    delivered = 0
    delimiter = text.sniff_delimiter(path, 6)
    if delimiter is not None:
        # With one delimiter, a field holding the other whitespace character would be split by
        # trec_eval; such a batch goes to the general path, which splits as trec_eval does.
        other = "\t" if delimiter == " " else " "
        types = {0: pa.string(), 2: pa.string(), 4: pa.float64()}
        if with_rank:
            types[3] = pa.int64()
        if stats is not None:
            types[5] = pa.string()
        try:
            for first, batch, ends_query in text.fast_columns(path, 6, delimiter, types):
                if _irregular(batch, other):
                    break
                score = batch.column("c4").to_numpy(zero_copy_only=False)
                lines = np.arange(first, first + batch.num_rows, dtype=np.int64)
                check_finite(score, source=str(path), lines=lines)
                if stats is not None and text.holds_byte(batch.column("c5"), other):
                    extra = pc.sum(pc.match_substring(batch.column("c5"), other)).as_py() or 0
                    stats["extra_fields"] = stats.get("extra_fields", 0) + int(extra)
                yield RowBatch(batch.column("c0"), batch.column("c2"), score, lines,
                               batch.column("c3").to_numpy(zero_copy_only=False)
                               if with_rank else None, ends_query=ends_query)
                delivered = first - 1 + batch.num_rows
            else:
                return
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # an irregular line: go on with the general path from where we are
    yield from _general_run_batches(path, delivered, with_rank, stats)


def _irregular(batch: pa.RecordBatch, other: str) -> bool:
    """Rows the fast path must leave to the general one: a ``#`` comment line (the general path
    skips it), or an id holding the other whitespace character (trec_eval splits there)."""
    ids = batch.column("c0")
    if text.holds_byte(ids, "#") and pc.any(pc.starts_with(ids, "#")).as_py():
        return True
    return any(text.holds_byte(batch.column(c), other) for c in ("c0", "c2"))


def _general_run_batches(path: Path, skip: int, with_rank: bool,
                         stats: dict | None) -> Iterator[RowBatch]:
    for numbers, lines in text.lines(path, skip):
        if len(lines) == 0:
            continue
        parts = text.split_fields(path, numbers, lines, min_fields=6, max_fields=None,
                                  expected=RUN_FIELDS)
        if stats is not None:
            extra = int(pc.sum(pc.greater(pc.list_value_length(parts), 6)).as_py() or 0)
            stats["extra_fields"] = stats.get("extra_fields", 0) + extra
        tokens = text.field(parts, 4)
        score = text.parse_floats(path, numbers, tokens, "score")
        check_finite(score, source=str(path), lines=numbers,
                     texts=tokens.to_pylist() if not np.isfinite(score).all() else None)
        rank = text.parse_integers(text.field(parts, 3)) if with_rank else None
        yield RowBatch(text.field(parts, 0), text.field(parts, 2), score, numbers, rank)


def read_qrels(path: Path) -> Qrels:
    """Judgments of a TREC qrels file: pyarrow's CSV parser when the lines are regular (as
    for runs), else the general path, which also names the line of any error."""
    delimiter = text.sniff_delimiter(path, 4)
    if delimiter is not None:
        try:
            parts = _fast_qrels(path, delimiter)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            parts = None  # an irregular line
        if parts is not None:
            return _qrels(path, parts)
    return _qrels(path, _general_qrels(path))


def _fast_qrels(path: Path, delimiter: str) -> list[tuple] | None:
    other = "\t" if delimiter == " " else " "
    types = {0: pa.string(), 2: pa.string(), 3: pa.float64()}
    parts = []
    for first, batch, _ in text.fast_columns(path, 4, delimiter, types):
        if _irregular(batch, other):
            return None
        numbers = np.arange(first, first + batch.num_rows, dtype=np.int64)
        grades = batch.column("c3").to_numpy(zero_copy_only=False)
        parts.append((batch.column("c0"), batch.column("c2"),
                      integral_grades(grades, source=str(path), lines=numbers), numbers))
    return parts


def _general_qrels(path: Path) -> list[tuple]:
    parts = []
    for nums, lines in text.lines(path):
        if len(lines) == 0:
            continue
        fields = text.split_fields(path, nums, lines, min_fields=4, max_fields=4,
                                   expected=QRELS_FIELDS)
        values = text.parse_floats(path, nums, text.field(fields, 3), "grade")
        parts.append((text.field(fields, 0), text.field(fields, 2),
                      integral_grades(values, source=str(path), lines=nums), nums))
    return parts


def _qrels(path: Path, parts: list[tuple]) -> Qrels:
    if not parts:
        raise InputError(path, "holds no judgments (only blank or comment lines)")
    qids, sids, grades, numbers = zip(*parts)
    return Qrels.from_columns(pa.chunked_array(qids, pa.string()),
                              pa.chunked_array(sids, pa.string()), np.concatenate(grades),
                              source=str(path), lines=np.concatenate(numbers))
