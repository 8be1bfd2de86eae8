"""String ids as bytes, without Python objects: byte matrices and fingerprints."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow


def _offsets(strings: pa.Array) -> np.ndarray:
    """The n + 1 int32 offsets into the data buffer (a view)."""
    return np.frombuffer(strings.buffers()[1], dtype=np.int32)[
        strings.offset: strings.offset + len(strings) + 1]


def bytes_of_length(strings: pa.Array, width: int) -> tuple[np.ndarray, np.ndarray]:
    """([n, width] uint8: the bytes of each string of `width` bytes, zeros for the others;
    whether the string has that length)."""
    offsets = _offsets(strings).astype(np.int64)
    fits = np.diff(offsets) == width
    out = np.zeros((len(strings), width), dtype=np.uint8)
    if fits.any():
        raw = np.frombuffer(strings.buffers()[2], dtype=np.uint8)
        out[fits] = raw[offsets[:-1][fits, None] + np.arange(width)]
    return out, fits


_MIX = np.uint64(0x9E3779B97F4A7C15)


def fingerprints(rows: np.ndarray) -> np.ndarray:
    """A 64-bit print per row of an [n, width] uint8 matrix (equal rows, equal prints).

    Read in place as 8-byte words at 0, 8, ... and width - 8 (the last may overlap), so every
    byte counts without a copy; rows under 8 bytes are zero-padded.
    """
    n, width = rows.shape
    out = np.zeros(n, dtype=np.uint64)
    if n == 0:
        return out
    if width < 8 or not rows.flags.c_contiguous:
        padded = np.zeros((n, (width + 7) // 8 * 8), dtype=np.uint8)
        padded[:, :width] = rows
        return fingerprints(padded)
    flat = rows.reshape(-1)
    for start in sorted({*range(0, width - 7, 8), width - 8}):
        word = np.ndarray((n,), dtype="<u8", buffer=flat, offset=start, strides=(width,))
        out ^= word
        out *= _MIX  # wraps modulo 2**64
    return out


class EqualLengthIds:
    """Ids of one byte length as an [n, width] matrix and a print per id. Prints may
    collide: users decide equal prints byte for byte."""

    def __init__(self, matrix: np.ndarray):
        self.matrix = matrix
        self.prints = fingerprints(matrix)

    @classmethod
    def of(cls, strings: pa.Array) -> EqualLengthIds | None:
        """The ids over an [n, length] uint8 view when all have one length (UUIDs); else
        None."""
        n = len(strings)
        if n == 0:
            return None
        offsets = _offsets(strings)
        width = int(offsets[1] - offsets[0])
        if width == 0 or int(offsets[-1] - offsets[0]) != n * width or \
                not (np.diff(offsets) == width).all():
            return None
        raw = np.frombuffer(strings.buffers()[2], dtype=np.uint8)
        return cls(raw[offsets[0]: offsets[0] + n * width].reshape(n, width))


def starts(values: pa.Array) -> np.ndarray:
    """bool per row: its value differs from the previous row's (the first row is True)."""
    out = np.ones(len(values), dtype=bool)
    if len(values) > 1:
        out[1:] = arrow.to_numpy(pc.not_equal(values[1:], values[:-1]))
    return out


_QUERY_MIX = np.uint64(0xC2B2AE3D27D4EB4F)


def repeated_rows(row_query: np.ndarray, ids: pa.Array,
                  equal_length: EqualLengthIds | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(earlier, later) row pairs with the same (query, id), ascending within a pair.

    Equal-length ids go by fingerprint (cheaper than a dictionary); repeated keys are then
    decided byte for byte, since prints may collide.
    """
    none = np.zeros(0, dtype=np.int64)
    if len(row_query) < 2:
        return none, none
    if equal_length is None:
        equal_length = EqualLengthIds.of(ids)
    if equal_length is not None:
        key = equal_length.prints ^ (row_query.astype(np.uint64) * _QUERY_MIX)
    else:
        encoded = pc.dictionary_encode(ids)
        codes = arrow.to_numpy(encoded.indices).astype(np.int64)
        key = row_query * len(encoded.dictionary) + codes
    ordered = np.sort(key)
    repeated = ordered[1:] == ordered[:-1]
    if not repeated.any():
        return none, none
    rows_at = np.flatnonzero(np.isin(key, ordered[1:][repeated]))
    encoded = pc.dictionary_encode(arrow.take(ids, rows_at))
    exact = row_query[rows_at] * len(encoded.dictionary) + \
        arrow.to_numpy(encoded.indices).astype(np.int64)
    order = np.argsort(exact, kind="stable")
    same = np.flatnonzero(exact[order][1:] == exact[order][:-1])
    return rows_at[order[same]], rows_at[order[same + 1]]


def as_string_array(values) -> pa.Array:
    """Ids from Arrow (any type, chunked or dictionary), Python or numpy as one string array;
    strings via `arrow.strings` (no pandas probe), None or numbers via `pa.array`."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        try:
            values = arrow.strings(values.tolist() if isinstance(values, np.ndarray) else values)
        except TypeError:
            values = pa.array(values)
    if values.type != pa.string():
        values = pc.cast(values, pa.string())
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
