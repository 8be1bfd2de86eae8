"""Line-oriented text through pyarrow: plain or gzip, streamed in blocks, no Python object per row.

Two ways to read whitespace-separated columns:

* the fast path hands the file to pyarrow's multithreaded CSV parser with a one-character
  delimiter; it applies when the first lines are regular (one space or one tab between fields, no
  leading blanks, no comments), and every row is then exactly one line;
* the general path reads whole lines and splits them on runs of whitespace, skipping blank lines
  and ``#`` comments as trec_eval does. It is slower, knows every line's number, and produces the
  precise error message when a line is wrong.

When the fast path meets a line it cannot parse, reading resumes on the general path at the first
line the fast path has not delivered, so a caller never sees a row twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from .. import arrow as pc
from ..errors import InputError
from .sniff import head_bytes, is_gzip

#: Text per block when streaming: small blocks keep pyarrow's read-ahead (about 40 blocks) small.
BLOCK_SIZE = 4 << 20
#: Files below this size are parsed at once, with every core.
WHOLE_FILE = 64 << 20


def open_stream(path: Path):
    return pa.input_stream(str(path), compression="gzip" if is_gzip(path) else None)


def sniff_delimiter(path: Path, ncols: int) -> str | None:
    """' ' or '\\t' when the first lines have exactly ``ncols`` fields split by that character."""
    lines = head_bytes(path).decode("utf-8", errors="replace").split("\n")
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines[:-1][:200]]
    if not lines:
        return None
    for delim in (" ", "\t"):
        if all(len(ln.split(delim)) == ncols == len(ln.split()) for ln in lines):
            return delim
    return None


def fast_columns(path: Path, ncols: int, delimiter: str, types: dict[int, pa.DataType],
                 ) -> Iterator[tuple[int, pa.RecordBatch]]:
    """(first line number, batch) with the columns in ``types``, named c<i>.

    A file smaller than :data:`WHOLE_FILE` is parsed at once on all cores; a larger one is
    streamed in :data:`BLOCK_SIZE` blocks, which bounds memory (pyarrow reads some blocks ahead).
    """
    names = [f"c{i}" for i in range(ncols)]
    options = dict(
        parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False,
                                         double_quote=False, escape_char=False,
                                         newlines_in_values=False, ignore_empty_lines=False),
        convert_options=pacsv.ConvertOptions(
            column_types={f"c{i}": t for i, t in types.items()},
            include_columns=[f"c{i}" for i in sorted(types)],
            null_values=[], true_values=[], false_values=[], strings_can_be_null=False,
            quoted_strings_can_be_null=False),
    )
    if not is_gzip(path) and path.stat().st_size < WHOLE_FILE:
        table = pacsv.read_csv(path, read_options=pacsv.ReadOptions(
            column_names=names, block_size=BLOCK_SIZE, use_threads=True), **options)
        batches = table.to_batches()
    else:
        # One parsing thread: the scoring thread has the other core (see prefetch.py).
        batches = pacsv.open_csv(open_stream(path), read_options=pacsv.ReadOptions(
            column_names=names, block_size=BLOCK_SIZE, use_threads=False), **options)
    line = 1
    for batch in batches:
        yield line, batch
        line += batch.num_rows


def holds_byte(strings: pa.Array, char: str) -> bool:
    """Whether any string holds ``char`` (one ASCII byte), by ``memchr`` over the data buffer:
    ten times faster than a string kernel. Bytes of a sliced array's neighbours may give a false
    alarm, never a miss."""
    data = strings.buffers()[2]
    if data is None or len(strings) == 0 or data.size == 0:
        return False
    if _memchr is not None:
        return bool(_memchr(data.address, ord(char), data.size))
    return bool((np.frombuffer(data, dtype=np.uint8) == ord(char)).any())


def _libc_memchr():
    try:
        import ctypes
        memchr = ctypes.CDLL(None).memchr  # the process's own symbols include the C library
        memchr.restype = ctypes.c_void_p
        memchr.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t)
        return memchr
    except (OSError, AttributeError):  # pragma: no cover - no C library at hand
        return None


_memchr = _libc_memchr()


def lines(path: Path, skip: int = 0) -> Iterator[tuple[np.ndarray, pa.Array]]:
    """(line numbers, text) of the non-blank, non-comment lines, trimmed; from line skip+1 on."""
    reader = pacsv.open_csv(
        open_stream(path),
        read_options=pacsv.ReadOptions(column_names=["text"], skip_rows=skip,
                                       block_size=BLOCK_SIZE, use_threads=True),
        parse_options=pacsv.ParseOptions(delimiter="\x01", quote_char=False, double_quote=False,
                                         escape_char=False, newlines_in_values=False,
                                         ignore_empty_lines=False),
        convert_options=pacsv.ConvertOptions(column_types={"text": pa.string()}, null_values=[],
                                             strings_can_be_null=False),
    )
    first = skip + 1
    try:
        for batch in reader:
            text = pc.utf8_trim_whitespace(batch.column(0))
            numbers = np.arange(first, first + batch.num_rows, dtype=np.int64)
            first += batch.num_rows
            keep = pc.and_(pc.greater(pc.binary_length(text), 0),
                           pc.invert(pc.starts_with(text, "#")))
            keep_np = keep.to_numpy(zero_copy_only=False)
            if not keep_np.all():
                text = pc.filter(text, keep)
                numbers = numbers[keep_np]
            yield numbers, text
    except pa.ArrowInvalid as exc:
        raise InputError(path, f"cannot be read as text ({_arrow_reason(exc)})",
                         line=_line_of(exc)) from None


def split_fields(path: Path, numbers: np.ndarray, text: pa.Array, *, min_fields: int,
                 max_fields: int | None, expected: str) -> pa.Array:
    """Split trimmed lines on whitespace; refuse a line with the wrong number of fields."""
    parts = pc.utf8_split_whitespace(text)
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    bad = counts < min_fields
    if max_fields is not None:
        bad |= counts > max_fields
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(path, f"expected {expected}, found {int(counts[i])} "
                               f"field{'s' if counts[i] != 1 else ''}",
                         line=int(numbers[i]))
    return parts


def field(parts: pa.Array, index: int) -> pa.Array:
    return pc.list_element(parts, index)


def parse_floats(path: Path, numbers: np.ndarray, tokens: pa.Array, what: str) -> np.ndarray:
    try:
        return pc.cast(tokens, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    # Error path: find the first token that is not a number (Python per token is fine here).
    for i, token in enumerate(tokens.to_pylist()):
        try:
            pc.cast(pa.array([token]), pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InputError(path, f"{what} {token!r} is not a number",
                             line=int(numbers[i])) from None
    raise AssertionError("unreachable")  # pragma: no cover


def parse_integers(tokens: pa.Array) -> np.ndarray | None:
    """Integers, or None when some token is not one (rank columns are informative only)."""
    try:
        return pc.cast(tokens, pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _arrow_reason(exc: Exception) -> str:
    text = str(exc).split("\n")[0]
    if "UTF8" in text or "utf8" in text.lower():
        return "not valid UTF-8"
    return text


def _line_of(exc: Exception) -> int | None:
    import re
    match = re.search(r"[Rr]ow #?(\d+)", str(exc))
    return int(match.group(1)) if match else None
