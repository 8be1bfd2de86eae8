"""The Arrow compute kernels skillret uses, called through pyarrow's function registry.

``import pyarrow.compute`` builds Python wrappers and docstrings for all of Arrow's ~400 kernels:
about 60 ms at the start of every process, and every DVC stage is a new process (scoring
SkillRet's test split takes about 0.5 s in all, docs/benchmarks.md). pyarrow's array methods
``take``, ``filter``, ``cast``, ``fill_null``, ``is_null``, ``unique``, ``sort_by``... import it
on first use, so
skillret calls those kernels here instead, with the same names as ``pyarrow.compute``.
``tests/test_cli.py`` checks that scoring a run never imports pyarrow.compute (nor pandas).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyarrow._compute import (
    CastOptions,
    MatchSubstringOptions,
    SetLookupOptions,
    SortOptions,
    call_function,
)


def indices(values) -> pa.Array:
    """An int64 Arrow array over a numpy array's memory (``pa.array`` would import numpy.ma and
    probe for pandas on the way)."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def mask(values) -> pa.Array:
    """A boolean Arrow array from a numpy bool array."""
    values = np.asarray(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(values),
                                 [None, pa.py_buffer(np.packbits(values, bitorder="little"))])


def take(values, positions):
    if isinstance(positions, np.ndarray):
        positions = indices(positions)
    return call_function("take", [values, positions])


def filter(values, keep):  # noqa: A001 - the kernel's name
    if isinstance(keep, np.ndarray):
        keep = mask(keep)
    return call_function("filter", [values, keep])


def cast(values, target: pa.DataType):
    return call_function("cast", [values], CastOptions.safe(target))


def fill_null(values, fill):
    return call_function("coalesce", [values, pa.scalar(fill, values.type)])


def index_in(values, value_set):
    return call_function("index_in", [values], SetLookupOptions(value_set))


def sort_indices(table, keys: list[tuple[str, str]]):
    return call_function("sort_indices", [table], SortOptions(sort_keys=keys))


def starts_with(values, pattern: str):
    return call_function("starts_with", [values], MatchSubstringOptions(pattern))


def match_substring(values, pattern: str):
    return call_function("match_substring", [values], MatchSubstringOptions(pattern))


def list_element(values, index: int):
    return call_function("list_element", [values, pa.scalar(index, pa.int32())])


def _kernel(name: str):
    def run(*args):
        return call_function(name, list(args))
    run.__name__ = name
    return run


dictionary_encode = _kernel("dictionary_encode")
unique = _kernel("unique")
count_distinct = _kernel("count_distinct")
array_sort_indices = _kernel("array_sort_indices")
is_null = _kernel("is_null")
invert = _kernel("invert")
and_ = _kernel("and")
or_ = _kernel("or")
equal = _kernel("equal")
not_equal = _kernel("not_equal")
greater = _kernel("greater")
any = _kernel("any")  # noqa: A001
all = _kernel("all")  # noqa: A001
sum = _kernel("sum")  # noqa: A001
binary_length = _kernel("binary_length")
list_value_length = _kernel("list_value_length")
utf8_trim_whitespace = _kernel("utf8_trim_whitespace")
utf8_split_whitespace = _kernel("utf8_split_whitespace")
