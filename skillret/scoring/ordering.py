"""The tie rule: how a query's results are put in order, exactly as trec_eval does.

Results are ordered by score, descending; equal scores are broken by skill id, *descending* in
byte order (trec_eval's ``comp_sim_docno``: ``strcmp(p2->docno, p1->docno)``). A rank column in
the input is ignored.

Scores are compared as 32-bit floats, as trec_eval keeps them in a C ``float`` (pytrec_eval
assigns Python's double to it, round-to-nearest): scores that differ only beyond single precision
(16777216.0 and 16777217.0; 1e-300 and -1e-300) tie, and one beyond the float range is +-inf.

Runs grouped by query and sorted by score only have their tied runs sorted (by skill id); other
inputs are sorted in full. :func:`order_results` orders a fused run's results.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow


def byte_order_codes(encoded: pa.DictionaryArray) -> np.ndarray:
    """int64 per row: the rank of the row's id among the distinct ids, in byte order."""
    dictionary = encoded.dictionary
    order = arrow.to_numpy(pc.array_sort_indices(dictionary))
    rank_of = np.empty(len(dictionary), dtype=np.int64)
    rank_of[order] = np.arange(len(dictionary), dtype=np.int64)
    return rank_of[arrow.to_numpy(encoded.indices)]


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


def rank_order(row_query: np.ndarray, score: np.ndarray, skill_id: pa.Array,
               depth: int | None = None) -> tuple[np.ndarray | None, np.ndarray]:
    """The ranked rows and each one's 1-based rank within its query; ``row_query`` is
    non-decreasing (rows grouped by query). Without ``depth``: every row, and None for the rows
    when they already are in order. With it: each query's top ``depth`` rows (positions), and
    on score-sorted input nothing is computed per row below the cutoff."""
    score32 = trec_scores(score)
    starts = group_starts(row_query)
    if (~starts[1:] & (score32[1:] > score32[:-1])).any():  # out of score order
        skill_key = byte_order_codes(pc.dictionary_encode(skill_id))
        perm = np.lexsort((-skill_key, -score32, row_query))
        ranks = ranks_within(group_starts(row_query[perm]))
        if depth is None:
            return perm, ranks
        top = np.flatnonzero(ranks <= depth)
        return perm[top], ranks[top]
    # ranks do not depend on the order within tied runs, which never leave their query
    tied = ~starts[1:] & (score32[1:] == score32[:-1])  # same query, same score
    if depth is None:
        return _order_ties(tied, skill_id), ranks_within(starts)
    first = np.flatnonzero(starts)                       # first row of each query's block
    keep = np.minimum(np.diff(np.append(first, len(row_query))), depth)
    before = np.cumsum(keep) - keep
    rank = np.arange(int(keep.sum()), dtype=np.int64) - np.repeat(before, keep) + 1
    rows = np.repeat(first, keep) + rank - 1

    def reaches(r):  # the row's rank is within the cutoff
        return r - first[np.searchsorted(first, r, side="right") - 1] < depth
    perm = _order_ties(tied, skill_id, reaches)
    if perm is not None:
        rows = perm[rows]
    return rows, rank


def ranks_within(starts: np.ndarray) -> np.ndarray:
    """1-based position of each row within its block (``starts``: the rows that begin one)."""
    index = np.arange(len(starts), dtype=np.int64)
    return index - np.maximum.accumulate(np.where(starts, index, 0)) + 1


def _order_ties(tie: np.ndarray, skill_id: pa.Array, reaches=None) -> np.ndarray | None:
    """Rows already in score order: sort each run of tied rows (``tie[i]``: rows i and i+1 tie)
    by skill id, descending; with ``reaches`` (rows -> bool), only the runs whose first row it
    accepts. The permutation, or None when every sorted run is already in order."""
    if not tie.any():
        return None
    member = np.zeros(len(tie) + 1, dtype=bool)
    member[:-1] |= tie
    member[1:] |= tie
    rows = np.flatnonzero(member)
    # a run starts at a member row not tied to the row before it
    run_start = np.ones(len(rows), dtype=bool)
    run_start[1:] = ~tie[rows[1:] - 1]
    run_id = np.cumsum(run_start)
    if reaches is not None:
        keep = reaches(rows[run_start])[run_id - 1]
        if not keep.all():
            rows, run_id = rows[keep], run_id[keep]
            if not len(rows):
                return None
    key = byte_order_codes(pc.dictionary_encode(arrow.take(skill_id, rows)))
    local = np.lexsort((-key, run_id))
    if (local == np.arange(len(rows))).all():
        return None
    perm = np.arange(len(tie) + 1, dtype=np.int64)
    perm[rows] = rows[local]
    return perm


# --- ordering results that are already grouped by query ----------------------------------------

def order_results(query: np.ndarray, n_queries: int, score: np.ndarray) -> np.ndarray:
    """The tie-rule order of results grouped by query (non-decreasing ``query``) and in skill id
    order within it, by one sort of (query, score bits, position) packed into an int64."""
    starts = group_starts(query)
    position = ranks_within(starts) - 1             # within the query, in skill id order
    slots = int(position.max()) + 1 if len(position) else 1
    if n_queries * slots >= 1 << 31:
        return argsort_by((query, n_queries), (descending_float32(score), 1 << 32),
                          (slots - 1 - position, slots))
    key = query << 32
    key += descending_float32(score)
    key *= slots
    key += slots - 1 - position
    key.sort()
    first = np.zeros(n_queries, dtype=np.int64)
    first[query[starts]] = np.flatnonzero(starts)
    return first[key // (slots << 32)] + (slots - 1 - key % slots)


def argsort_by(*keys: tuple[np.ndarray, int]) -> np.ndarray:
    """The order of rows by keys (values in ``[0, size)``, size), most significant first, that
    together tell every row apart: packed with the row number into an int64 and sorted as values
    (faster than an argsort); when they do not fit, an argsort or numpy's lexsort."""
    n = len(keys[0][0])
    total = 1
    for _, size in keys:
        total *= max(int(size), 1)
    if total >= 1 << 63:
        return np.lexsort([values for values, _ in reversed(keys)])
    combined = np.zeros(n, dtype=np.int64)
    for values, size in keys:
        combined *= max(int(size), 1)
        combined += values
    row_bits = max(n - 1, 1).bit_length()
    if total << row_bits >= 1 << 63:
        return np.argsort(combined)
    combined <<= row_bits
    combined |= np.arange(n, dtype=np.int64)
    combined.sort()
    return combined & ((1 << row_bits) - 1)


def descending_float32(values: np.ndarray) -> np.ndarray:
    """int64 in [0, 2**32): ascending as the values compared as 32-bit floats descend (the
    comparison trec_eval makes; -0 and +0 are equal)."""
    bits = (trec_scores(values) + np.float32(0)).view(np.uint32).astype(np.int64)
    return np.where(bits >= 1 << 31, bits, (1 << 31) - 1 - bits)  # negative: sign bit set
