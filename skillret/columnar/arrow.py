"""Between numpy, Python values and Arrow, over buffers: no pyarrow conversion, no pandas.

pyarrow's generic conversions (`pa.array`, `pa.scalar`, `pa.table` of numpy arrays,
`Array.to_numpy` even for zero-copy, a compute call given a Python value such as
`pc.add(a, 1)`) probe for pandas on their first use in a process, and import it when it is
installed: 0.15-0.25 s, more than scoring a small run takes. A scoring process converts here
instead, through the public buffer API (`pa.Array.from_buffers`, `Array.buffers`,
`np.frombuffer`), which never probes:

* numpy -> Arrow: `from_numpy` (ints, floats, bools), `indices` (int64),
  `mask` (bool); Python strings -> Arrow: `strings`; `empty`;
* Arrow -> numpy: `to_numpy` (fixed-width values, booleans, without nulls);
* a literal operand of a kernel: `scalar` (`pc.equal(x, arrow.scalar("a"))`);
* `take` and `filter`: `pyarrow.compute.take` / `filter` that accept numpy
  positions and masks too.

Every other kernel is called through the public `pyarrow.compute`, with Arrow operands only.
`tests/test_arrow.py` holds these to pyarrow's own conversions; `tests/test_cli.py` runs
the commands and checks that pandas was never imported.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: The fixed-width Arrow types `to_numpy` and `from_numpy` convert, and their dtypes.
NUMPY_TYPES = {
    pa.int8(): np.dtype(np.int8), pa.int16(): np.dtype(np.int16),
    pa.int32(): np.dtype(np.int32), pa.int64(): np.dtype(np.int64),
    pa.uint8(): np.dtype(np.uint8), pa.uint16(): np.dtype(np.uint16),
    pa.uint32(): np.dtype(np.uint32), pa.uint64(): np.dtype(np.uint64),
    pa.float16(): np.dtype(np.float16), pa.float32(): np.dtype(np.float32),
    pa.float64(): np.dtype(np.float64),
}
_ARROW_TYPES = {dtype: arrow_type for arrow_type, dtype in NUMPY_TYPES.items()}
_INT32_MAX = 2 ** 31 - 1


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numpy array of an Arrow array's values: what `values.to_numpy()` gives, without the
    pandas probe `to_numpy` makes.

    * integers and floats: a read-only view over the Arrow data buffer (no copy; it keeps the
      buffer alive), from `values.offset` on, so a slice gives its own values;
    * booleans (one bit per value, starting at any bit): a new bool array;
    * a ChunkedArray: its only chunk as above, or its chunks combined (a copy); no chunk gives
      an empty array of the type's dtype;
    * an empty array: an empty numpy array of the dtype (its data buffer may be absent);
    * nulls are refused (ValueError): Arrow leaves their slots undefined, and `to_numpy` would
      turn them into NaN or objects. Fill or filter them first;
    * any other type (strings, lists, dictionary, temporal) is refused (TypeError).
    """
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 0:  # combine_chunks() of no chunk probes for pandas
            return np.zeros(0, dtype=bool if pa.types.is_boolean(values.type)
                            else _dtype(values.type))
        values = values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    if values.null_count:
        raise ValueError(f"{values.null_count} null(s) in a {values.type} array: fill or drop "
                         "them before converting to numpy")
    n, offset, data = len(values), values.offset, values.buffers()[1]
    if pa.types.is_boolean(values.type):
        if n == 0:
            return np.zeros(0, dtype=bool)
        skip = offset % 8
        packed = np.frombuffer(data, dtype=np.uint8, count=(skip + n + 7) // 8,
                               offset=offset // 8)
        return np.unpackbits(packed, count=skip + n, bitorder="little")[skip:].view(bool)
    dtype = _dtype(values.type)
    if n == 0:
        return np.zeros(0, dtype=dtype)
    view = np.frombuffer(data, dtype=dtype, count=n, offset=offset * dtype.itemsize)
    view.flags.writeable = False  # Arrow arrays are immutable (a mutable buffer would allow it)
    return view


def _dtype(arrow_type: pa.DataType) -> np.dtype:
    try:
        return NUMPY_TYPES[arrow_type]
    except KeyError:
        raise TypeError(f"no buffer conversion of {arrow_type} to numpy") from None


def from_numpy(values, nulls=None) -> pa.Array:
    """An Arrow array of a 1-D numpy array (or anything `np.asarray` makes one of): what
    `pa.array(values, mask=nulls)` gives for ints, uints, floats and bools, without its pandas
    probe.

    Numbers share the numpy memory when it is contiguous and native-endian (else a copy is made
    first; the Arrow array keeps the numpy one alive); booleans are packed to bits (a copy).
    `nulls`: a bool array, True where the value is null (the slot keeps the numpy value, which
    Arrow then ignores); without it there is no null, and a NaN stays a float NaN (as in
    `pa.array` without `from_pandas`). Other dtypes (object, strings, datetimes) are refused
    (TypeError); an empty array gives an empty Arrow array of the type.
    """
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
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), len(values), [validity, data], null_count)
    native = values.dtype.newbyteorder("=")
    arrow_type = _ARROW_TYPES.get(native)
    if arrow_type is None:
        raise TypeError(f"no buffer conversion of {values.dtype} to Arrow")
    values = np.ascontiguousarray(values, dtype=native)
    return pa.Array.from_buffers(arrow_type, len(values), [validity, pa.py_buffer(values)],
                                 null_count)


def indices(values) -> pa.Array:
    """An int64 Arrow array over a numpy array's memory (`from_numpy` as int64)."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def mask(values) -> pa.Array:
    """A boolean Arrow array from a numpy bool array (packed to bits: a copy)."""
    values = np.asarray(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(values),
                                 [None, pa.py_buffer(np.packbits(values, bitorder="little"))])


def strings(values) -> pa.Array:
    """A string Arrow array of Python `str` values: `pa.array(values, pa.string())` without
    its pandas probe.

    The text is joined and encoded once (in C); each value's byte length is its length when the
    text is ASCII, else it is measured value by value (439k UUIDs: 17 ms, against 10 ms for
    `pa.array`). TypeError when a value is not a `str`
    (None included: there are no nulls), UnicodeEncodeError for a lone surrogate (which UTF-8
    cannot hold; `pa.array` raises the same), OverflowError past 2 GiB of text (the limit of
    a string array's 32-bit offsets). An empty sequence gives an empty array.
    """
    values = values if isinstance(values, list) else list(values)
    text = "".join(values)
    data = text.encode("utf-8")
    lengths = (map(len, values) if text.isascii()  # one byte per character
               else (len(v.encode("utf-8")) for v in values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(lengths, dtype=np.int64, count=len(values)), out=offsets[1:])
    if len(data) > _INT32_MAX:
        raise OverflowError(f"{len(data):,} bytes of text: more than a string array holds")
    return pa.Array.from_buffers(pa.string(), len(values),
                                 [None, pa.py_buffer(offsets.astype(np.int32)),
                                  pa.py_buffer(data)])


def empty(arrow_type: pa.DataType = pa.string()) -> pa.Array:
    """An empty Arrow array of the type: `pa.array([], arrow_type)` without its pandas probe
    (`pa.nulls` of no value is one, without a null)."""
    return pa.nulls(0, arrow_type)


def scalar(value, arrow_type: pa.DataType | None = None) -> pa.Scalar:
    """An Arrow scalar, as a kernel's literal operand: `pa.scalar(value, arrow_type)` without
    its pandas probe (a compute call given a Python value makes that probe too).

    `str` -> string, `bool` -> bool, `int` -> int64, `float` -> float64, then cast to
    `arrow_type` when one is given (Arrow's safe cast: a value that does not fit is an
    ArrowInvalid). It is the one element of an array built by `strings` or
    `from_numpy`. None and other types are refused (TypeError).
    """
    if isinstance(value, str):
        array = strings([value])
    elif isinstance(value, (bool, np.bool_)):
        array = mask(np.array([value], dtype=bool))
    elif isinstance(value, (int, np.integer)):
        array = from_numpy(np.array([value], dtype=np.int64))
    elif isinstance(value, (float, np.floating)):
        array = from_numpy(np.array([value], dtype=np.float64))
    else:
        raise TypeError(f"no Arrow scalar of {type(value).__name__}")
    if arrow_type is not None and array.type != arrow_type:
        array = array.cast(arrow_type)
    return array[0]


def take(values, positions):
    """`pyarrow.compute.take`; `positions` may be a numpy array."""
    if isinstance(positions, np.ndarray):
        positions = indices(positions)
    return pc.take(values, positions)


def filter(values, keep):  # noqa: A001 - the kernel's name
    """`pyarrow.compute.filter`; `keep` may be a numpy bool array."""
    if isinstance(keep, np.ndarray):
        keep = mask(keep)
    return pc.filter(values, keep)
