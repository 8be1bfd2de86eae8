"""TREC runs (``qid Q0 docid rank score tag``) and qrels (``qid iter docid grade``).

Lines are split as trec_eval splits them (see :mod:`skillret.io.text`): runs of ASCII whitespace
separate fields, blank lines and ``#`` comments are skipped, fields after a run's tag are ignored
(and counted), the rank column is ignored for scoring. Unlike trec_eval's ``atof``, a score that
is not a finite number is an error, not a silent 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa

from skillret.columnar.convert import integral_grades
from skillret.errors import InputError
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import RowBatch
from skillret.io import text

RUN_FIELDS = "6 fields: qid Q0 skill_id rank score tag"
QRELS_FIELDS = "4 fields: qid iter skill_id grade"

RUN_LAYOUT = text.Layout(6, exact=False, expected=RUN_FIELDS, strings=(0, 2),
                         numbers={4: "score"})
RANKED_RUN_LAYOUT = text.Layout(6, exact=False, expected=RUN_FIELDS, strings=(0, 2),
                                numbers={4: "score"}, integers=(3,))
QRELS_LAYOUT = text.Layout(4, exact=True, expected=QRELS_FIELDS, strings=(0, 2),
                           numbers={3: "grade"})


def run_batches(path: Path, *, with_rank: bool = False, block_size: int = text.BLOCK_SIZE,
                fast: bool = True, parsers: int | None = None) -> Iterator[RowBatch]:
    """Row batches of a TREC run in file order, one per block (streamed; gzip is fine).

    ``fast=False`` splits every block the general way, ``parsers=1`` on this thread (the tests
    compare the ways)."""
    layout = RANKED_RUN_LAYOUT if with_rank else RUN_LAYOUT
    rows = 0
    for fields in text.read_fields(path, layout, block_size=block_size, fast=fast,
                                   parsers=parsers):
        if not len(fields.line):
            continue
        rows += len(fields.line)
        yield RowBatch(fields.columns[0], fields.columns[2], fields.columns[4], fields.line,
                       fields.columns.get(3), ends_query=fields.ends_group,
                       extra_fields=fields.extra)
    if not rows:
        raise InputError(path, "holds no results (only blank or comment lines)")


def qrels_batches(path: Path, *, block_size: int = text.BLOCK_SIZE, fast: bool = True,
                  parsers: int | None = None
                  ) -> Iterator[tuple[pa.Array, pa.Array, np.ndarray, np.ndarray]]:
    """(query ids, skill ids, grades, line numbers) of a TREC qrels file, block by block."""
    for fields in text.read_fields(path, QRELS_LAYOUT, block_size=block_size, fast=fast,
                                   parsers=parsers):
        if len(fields.line):
            grades = integral_grades(fields.columns[3], source=str(path), lines=fields.line)
            yield fields.columns[0], fields.columns[2], grades, fields.line


def read_qrels(path: Path, *, block_size: int = text.BLOCK_SIZE, fast: bool = True) -> Qrels:
    """Judgments of a TREC qrels file."""
    parts = list(qrels_batches(path, block_size=block_size, fast=fast))
    if not parts:
        raise InputError(path, "holds no judgments (only blank or comment lines)")
    qids, sids, grades, numbers = zip(*parts)
    return Qrels.from_columns(pa.chunked_array(qids, pa.string()),
                              pa.chunked_array(sids, pa.string()), np.concatenate(grades),
                              source=str(path), lines=np.concatenate(numbers))
