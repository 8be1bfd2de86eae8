"""skillret.columnar.arrow's buffer-level conversions against pyarrow's own (``Array.to_numpy``,
``pa.array``, ``pa.scalar``), which they replace because those probe for pandas."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from skillret.columnar import arrow

TYPES = list(arrow.NUMPY_TYPES)


def _sample(arrow_type: pa.DataType, n: int = 37) -> pa.Array:
    """n values of the type, small enough for every width, negatives where signed."""
    values = np.arange(n) * 3 - (0 if pa.types.is_unsigned_integer(arrow_type) else 50)
    return pa.array(values.tolist(), pa.int64()).cast(arrow_type)


@pytest.mark.parametrize("arrow_type", TYPES + [pa.bool_()], ids=str)
@pytest.mark.parametrize("start,stop", [(0, 37), (0, 0), (5, 5), (1, 37), (3, 20), (8, 16),
                                        (13, 14), (36, 37)])
def test_to_numpy_is_to_numpy_for_slices(arrow_type, start, stop):
    if pa.types.is_boolean(arrow_type):
        whole = pa.array([i % 3 == 0 or i % 7 == 0 for i in range(37)], pa.bool_())
    else:
        whole = _sample(arrow_type)
    part = whole[start:stop]
    got = arrow.to_numpy(part)
    want = part.to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("arrow_type", TYPES + [pa.bool_()], ids=str)
def test_to_numpy_of_chunked_arrays(arrow_type):
    if pa.types.is_boolean(arrow_type):
        chunks = [pa.array([True, False, True]), pa.array([], pa.bool_()),
                  pa.array([False] * 9 + [True])[2:]]
    else:
        chunks = [_sample(arrow_type, 5), _sample(arrow_type, 0), _sample(arrow_type, 11)[3:]]
    for some in (chunks, chunks[:1], chunks[1:2], []):
        chunked = pa.chunked_array(some, arrow_type)
        want = (chunked.to_numpy() if some else
                np.zeros(0, bool if arrow_type == pa.bool_() else arrow.NUMPY_TYPES[arrow_type]))
        got = arrow.to_numpy(chunked)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_to_numpy_shares_memory_and_keeps_it_alive():
    values = np.arange(10, dtype=np.int64)
    got = arrow.to_numpy(arrow.from_numpy(values)[2:])
    assert np.shares_memory(got, values) and not got.flags.writeable
    got = arrow.to_numpy(pc.add(arrow.from_numpy(values), arrow.scalar(1)))
    del values
    np.testing.assert_array_equal(got, np.arange(1, 11))


def test_to_numpy_refuses_nulls_and_other_types():
    with pytest.raises(ValueError, match="null"):
        arrow.to_numpy(pa.array([1, None, 3]))
    with pytest.raises(ValueError, match="null"):
        arrow.to_numpy(pa.array([True, None]))
    np.testing.assert_array_equal(arrow.to_numpy(pa.array([1, None, 3])[2:]), [3])
    for other in (pa.array(["a"]), pa.array([[1]]), pa.array(["a"]).dictionary_encode(),
                  pa.array([0], pa.timestamp("s"))):
        with pytest.raises(TypeError):
            arrow.to_numpy(other)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint32, np.uint64, np.float16, np.float32, np.float64,
                                   np.bool_], ids=lambda d: np.dtype(d).name)
def test_from_numpy_is_pa_array(dtype):
    values = (np.arange(23) % 5 == 1) if dtype is np.bool_ else np.arange(23).astype(dtype)
    for case in (values, values[3:], values[::2], values[:0]):
        got = arrow.from_numpy(case)
        assert got.equals(pa.array(case)) and got.type == pa.array(case).type
        nulls = np.arange(len(case)) % 4 == 2
        got = arrow.from_numpy(case, nulls=nulls)
        assert got.equals(pa.array(case, mask=nulls)) and got.null_count == nulls.sum()


def test_from_numpy_edge_cases():
    swapped = np.arange(5, dtype=">i8")
    assert arrow.from_numpy(swapped).equals(pa.array(np.arange(5)))
    nan = np.array([1.0, np.nan])
    assert arrow.from_numpy(nan).null_count == 0 and np.isnan(arrow.to_numpy(
        arrow.from_numpy(nan))[1])
    assert arrow.from_numpy([1, 2]).type == pa.int64()
    for bad in (np.array(["a"]), np.array([object()]), np.zeros(2, "datetime64[s]")):
        with pytest.raises(TypeError):
            arrow.from_numpy(bad)
    with pytest.raises(ValueError):
        arrow.from_numpy(np.zeros((2, 2)))
    with pytest.raises(ValueError):
        arrow.from_numpy(np.zeros(3), nulls=np.zeros(2, bool))


@pytest.mark.parametrize("values", [[], [""], ["a", "", "bc"], ["é", "a", "日本", "", "z\x00"],
                                    ["x" * 1000] * 3, ["\u2028", "\U0001f600"]],
                         ids=["empty", "one-empty", "ascii", "utf8", "long", "astral"])
def test_strings_is_pa_array(values):
    got = arrow.strings(values)
    assert got.equals(pa.array(values, pa.string()))
    assert arrow.strings(iter(values)).equals(got)
    got.validate(full=True)


def test_strings_refuse_what_is_not_text():
    for bad in (["a", None], ["a", 1], [b"a"]):
        with pytest.raises(TypeError):
            arrow.strings(bad)
    with pytest.raises(UnicodeEncodeError):
        arrow.strings(["\ud800"])


def test_scalar_is_pa_scalar():
    for value, arrow_type in (("Q0", None), ("é", None), ("", None), (-1, None),
                              (np.int32(3), pa.int32()), (2.5, None), (True, None),
                              (np.int64(7), None), (np.float64(1), None)):
        got = arrow.scalar(value)
        want = pa.scalar(value, arrow_type)
        assert got.type == want.type and got.equals(want)
    for bad in (None, b"x", [1]):
        with pytest.raises(TypeError):
            arrow.scalar(bad)


def test_the_helpers_never_import_pandas():
    """What this module exists for: the conversions above make no pandas probe."""
    code = """if True:
        import sys
        import numpy as np, pyarrow as pa, pyarrow.compute as pc
        from skillret.columnar import arrow
        ints = arrow.from_numpy(np.arange(9, dtype=np.int32), nulls=np.arange(9) == 3)
        arrow.to_numpy(pc.fill_null(ints, arrow.scalar(np.int32(0)))[1:])
        arrow.to_numpy(arrow.from_numpy(np.arange(9) % 2 == 0)[3:])
        arrow.to_numpy(pa.chunked_array([], pa.float64()))
        text = arrow.strings(["a", "é", ""])
        pc.equal(text, arrow.scalar("a")), pc.list_element(pc.ascii_split_whitespace(text),
                                                           arrow.scalar(0))
        arrow.take(text, np.array([2, 0])), arrow.filter(text, np.array([True, False, True]))
        print("pandas" in sys.modules)"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
