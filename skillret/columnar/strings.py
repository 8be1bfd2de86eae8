"""String id helpers: where a grouped column's value changes (`starts`), rows whose (query, id)
pair appeared before (`repeated_rows`), and ids from anything as one string array
(`as_string_array`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow


def starts(values: pa.Array) -> np.ndarray:
    """bool per row: the row's value differs from the previous row's (the first row starts)."""
    out = np.ones(len(values), dtype=bool)
    if len(values) > 1:
        out[1:] = arrow.to_numpy(pc.not_equal(values[1:], values[:-1]))
    return out


def repeated_rows(row_query: np.ndarray, ids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(earlier, later): each row whose (query, id) pair appeared before, and the previous row
    with that pair; both ascending in row order within a pair."""
    none = np.zeros(0, dtype=np.int64)
    if len(row_query) < 2:
        return none, none
    encoded = pc.dictionary_encode(ids)
    key = row_query * len(encoded.dictionary) + arrow.to_numpy(encoded.indices).astype(np.int64)
    ordered = np.sort(key)
    if not (ordered[1:] == ordered[:-1]).any():
        return none, none
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    return order[same], order[same + 1]


def as_string_array(values) -> pa.Array:
    """Ids as one Arrow string array: Arrow arrays (chunked, dictionary-encoded, large strings or
    other types) cast, Python or numpy values converted."""
    array = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else _from_python(values)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_large_string(array.type):
        array = pc.cast(array, pa.string())
    if not pa.types.is_string(array.type):
        array = pc.cast(array, pa.string())
    return array


def _from_python(values) -> pa.Array:
    """Python or numpy ids: strings through `arrow.strings` (no pandas probe); anything
    else (None, numbers) through pyarrow's conversion, as before."""
    try:
        return arrow.strings(values.tolist() if isinstance(values, np.ndarray) else values)
    except TypeError:
        return pa.array(values)
