"""numpy <-> Arrow over buffers, because pyarrow's own conversions (`pa.array`, `pa.scalar`,
`to_numpy`, kernels given Python values) import pandas on first use.
`tests/columnar/test_arrow.py` holds these to pyarrow's conversions."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: The fixed-width Arrow types converted, and their dtypes.
NUMPY_TYPES = {t: np.dtype(t.to_pandas_dtype()) for t in (
    pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
    pa.uint64(), pa.float16(), pa.float32(), pa.float64())}
_ARROW_TYPES = {dtype: arrow_type for arrow_type, dtype in NUMPY_TYPES.items()}


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Numbers as a read-only view, booleans as a copy; ValueError for nulls, TypeError for
    other types."""
    if isinstance(values, pa.ChunkedArray):
        values = pa.concat_arrays(values.chunks) if values.num_chunks else pa.nulls(0, values.type)
    if values.null_count:
        raise ValueError(f"{values.null_count} null(s) in a {values.type} array: fill or drop "
                         "them before converting to numpy")
    n, offset, data = len(values), values.offset, values.buffers()[1]
    if pa.types.is_boolean(values.type):
        if n == 0:
            return np.zeros(0, dtype=bool)
        skip = offset % 8
        packed = np.frombuffer(data, np.uint8, count=(skip + n + 7) // 8, offset=offset // 8)
        return np.unpackbits(packed, count=skip + n, bitorder="little")[skip:].view(bool)
    if values.type not in NUMPY_TYPES:
        raise TypeError(f"no buffer conversion of {values.type} to numpy")
    dtype = NUMPY_TYPES[values.type]
    if n == 0:
        return np.zeros(0, dtype=dtype)
    view = np.frombuffer(data, dtype=dtype, count=n, offset=offset * dtype.itemsize)
    view.flags.writeable = False
    return view


def from_numpy(values, nulls=None) -> pa.Array:
    """`pa.array(values, mask=nulls)` for 1-D numbers (shared memory when contiguous and
    native-endian) or booleans; TypeError for other dtypes."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"a 1-D array is wanted, not {values.ndim}-D")
    validity, null_count = None, 0
    if nulls is not None:
        nulls = np.asarray(nulls, dtype=bool)
        if nulls.shape != values.shape:
            raise ValueError("values and nulls differ in length")
        null_count = int(nulls.sum())
        if null_count:
            validity = pa.py_buffer(np.packbits(~nulls, bitorder="little"))
    if values.dtype.kind == "b":
        data, arrow_type = np.packbits(values, bitorder="little"), pa.bool_()
    else:
        arrow_type = _ARROW_TYPES.get(values.dtype.newbyteorder("="))
        if arrow_type is None:
            raise TypeError(f"no buffer conversion of {values.dtype} to Arrow")
        data = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("="))
    return pa.Array.from_buffers(arrow_type, len(values), [validity, pa.py_buffer(data)],
                                 null_count)


def strings(values) -> pa.Array:
    """`pa.array(values, pa.string())`; TypeError for non-str, OverflowError past 2 GiB."""
    values = values if isinstance(values, list) else list(values)
    text = "".join(values)
    data = text.encode("utf-8")
    lengths = map(len, values) if text.isascii() else (len(v.encode("utf-8")) for v in values)
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(lengths, dtype=np.int64, count=len(values)), out=offsets[1:])
    if len(data) > 2 ** 31 - 1:
        raise OverflowError(f"{len(data):,} bytes of text: more than a string array holds")
    return pa.Array.from_buffers(pa.string(), len(values), [
        None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


def scalar(value) -> pa.Scalar:
    """`pa.scalar(value)` of a str, bool, int or float (a numpy one keeps its type); TypeError
    otherwise."""
    if not isinstance(value, (str, bool, int, float, np.bool_, np.integer, np.floating)):
        raise TypeError(f"no Arrow scalar of {type(value).__name__}")
    return (strings([value]) if isinstance(value, str) else from_numpy(np.array([value])))[0]


def indices(values) -> pa.Array:
    """An int64 Arrow array of positions."""
    return from_numpy(np.asarray(values, dtype=np.int64))


def take(values, positions):
    """`pyarrow.compute.take`; `positions` may be a numpy array."""
    return pc.take(values, indices(positions) if isinstance(positions, np.ndarray) else positions)


def filter(values, keep):  # noqa: A001 - the kernel's name
    """`pyarrow.compute.filter`; `keep` may be a numpy bool array."""
    return pc.filter(values, from_numpy(np.asarray(keep, bool)) if isinstance(keep, np.ndarray)
                     else keep)
