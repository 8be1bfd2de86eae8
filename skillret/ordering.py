"""The tie rule: how a query's results are put in order, exactly as trec_eval does.

Results are ordered by score, descending; equal scores are broken by skill id, *descending* in
byte order (trec_eval's ``comp_sim_docno``: ``strcmp(p2->docno, p1->docno)``). A rank column in
the input is ignored.

Scores are compared as 32-bit floats. trec_eval keeps a result's score in a C ``float``
(``TEXT_RESULTS.sim``), and pytrec_eval assigns Python's double to it, so two scores that differ
only beyond single precision (0.1 and 0.10000000000000002; 16777216.0 and 16777217.0; 1e-300
and -1e-300) are a tie, broken by skill id, and a score beyond the float range is +-inf. The
conversion here is the same IEEE round-to-nearest the C assignment performs.

Most runs arrive already in this order, so it is checked first (a linear pass) and a sort
happens only when needed.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def byte_order_codes(encoded: pa.DictionaryArray) -> np.ndarray:
    """int64 per row: the rank of the row's id among the distinct ids, in byte order."""
    dictionary = encoded.dictionary
    order = pc.array_sort_indices(dictionary).to_numpy()
    rank_of = np.empty(len(dictionary), dtype=np.int64)
    rank_of[order] = np.arange(len(dictionary), dtype=np.int64)
    return rank_of[encoded.indices.to_numpy(zero_copy_only=False)]


def group_starts(row_query: np.ndarray) -> np.ndarray:
    """bool per row: the row starts a new query block."""
    starts = np.ones(len(row_query), dtype=bool)
    if len(row_query) > 1:
        np.not_equal(row_query[1:], row_query[:-1], out=starts[1:])
    return starts


def trec_scores(score: np.ndarray) -> np.ndarray:
    """The scores as trec_eval compares them: rounded to 32-bit floats (overflow gives +-inf)."""
    with np.errstate(over="ignore"):
        return np.asarray(score, dtype=np.float64).astype(np.float32)


def is_ranked(row_query: np.ndarray, score: np.ndarray, skill_id: pa.Array) -> bool:
    """True when rows are grouped by query (codes non-decreasing) and in tie-rule order.
    ``score`` is already in trec_eval's precision (:func:`trec_scores`)."""
    n = len(row_query)
    if n < 2:
        return True
    if (row_query[1:] < row_query[:-1]).any():
        return False
    same = row_query[1:] == row_query[:-1]
    if (same & (score[1:] > score[:-1])).any():
        return False
    ties = np.flatnonzero(same & (score[1:] == score[:-1]))
    if len(ties) == 0:
        return True
    first = skill_id.take(pa.array(ties))
    second = skill_id.take(pa.array(ties + 1))
    return bool(pc.all(pc.greater(first, second)).as_py())


def rank_order(row_query: np.ndarray, score: np.ndarray, skill_id: pa.Array,
               encoded: pa.DictionaryArray | None = None):
    """The permutation that ranks the rows (None when they already are), and each ranked row's
    1-based rank within its query. ``encoded`` is ``skill_id`` dictionary-encoded, if at hand."""
    perm = None
    score = trec_scores(score)
    if not is_ranked(row_query, score, skill_id):
        if encoded is None:
            encoded = pc.dictionary_encode(skill_id)
        skill_key = byte_order_codes(encoded)
        perm = np.lexsort((-skill_key, -score, row_query))
        row_query = row_query[perm]
    starts = group_starts(row_query)
    index = np.arange(len(row_query), dtype=np.int64)
    first_of_group = np.maximum.accumulate(np.where(starts, index, 0))
    return perm, index - first_of_group + 1
