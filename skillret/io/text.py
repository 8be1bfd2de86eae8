"""Whitespace-separated text (TREC runs and qrels): one definition of a field, two ways to apply it.

The definition (trec_eval's, which splits lines with C's ``isspace``):

* the file is UTF-8 text, cut into lines at ``\\n``; a NUL byte or invalid UTF-8 anywhere is an
  error naming its line;
* a line's fields are its maximal runs of bytes other than ASCII whitespace (space, tab, CR, VT,
  FF): Python's ``bytes.split()``. Every other byte belongs to a field, so U+00A0, U+3000,
  U+2028 or U+0085 inside an id are part of the id. A doubled, leading or trailing blank only
  separates; there is no empty field, and a line whose fields then number other than the format
  wants (a run: at least 6; qrels: exactly 4) is an error naming its line;
* a line without fields is blank, and a line whose first field starts with ``#`` is a comment:
  both are skipped.

Reading: :func:`blocks` reads the file (plain or gzip) with ordinary buffered reads, in blocks of
whole lines. :func:`split_block` turns a block into the wanted fields:

* the *fast* way hands a *regular* block to pyarrow's CSV parser with a one-byte delimiter.
  Regular: the block is ASCII or valid UTF-8, holds no NUL, CR, VT or FF, uses one of space and
  tab only, has no blank or comment line and no doubled, leading or trailing separator, and every
  line has the wanted number of fields with finite numbers. Under those conditions a
  one-byte-delimited split and the definition give the same fields;
* the *general* way applies the definition with Arrow's ASCII whitespace kernels, and names the
  first wrong line of the block. Every error comes from here.

``tests/test_tokenizer.py`` holds both ways to a pure-Python statement of the definition on
generated files with odd and bad lines anywhere, at any block size.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .. import arrow
from ..convert import NotANumber, cast_floats, check_finite, integral_grades, valid_grades
from ..errors import InputError
from .sniff import is_gzip

#: Bytes per block read (the last line of a block is completed from the next read).
BLOCK_SIZE = 8 << 20
#: The longest line accepted: longer is an error, not an ever-growing buffer (a compressed file
#: of a few MB may expand to gigabytes without a newline).
MAX_LINE = 1 << 20

#: ASCII whitespace as trec_eval's ``isspace`` sees it (``\n`` ends a line).
WHITESPACE = b" \t\n\r\x0b\x0c"


@dataclass(frozen=True)
class Layout:
    """What a line holds: ``fields`` wanted (``exact``: no more; else more are ignored and
    counted), ``expected`` for messages, and the fields to return: ``strings`` as text,
    ``numbers`` as float64, each a ``"score"`` (finite) or a ``"grade"`` (an integer in range),
    ``integers`` as int64 when every token is one (else None: a rank is informative only)."""

    fields: int
    exact: bool
    expected: str
    strings: tuple[int, ...]
    numbers: dict[int, str]
    integers: tuple[int, ...] = ()


@dataclass
class Fields:
    """The fields of a block's data lines: ``line`` (1-based numbers), ``columns`` by field index
    (string arrays, float64 numpy arrays, int64 numpy or None for ``integers``), and how many
    lines had fields beyond the wanted ones."""

    line: np.ndarray
    columns: dict
    extra: int = 0


# ------------------------------------------------------------------------------ reading blocks
def blocks(path: Path, block_size: int = BLOCK_SIZE, max_line: int = MAX_LINE
           ) -> Iterator[tuple[int, bytes]]:
    """(number of the first line, bytes of whole lines) through the file, in order.

    A plain file is read with ``read``, a gzip one through pyarrow's decompressing stream.
    A file whose size changes while it is read is an error, not a signal or a silent cut.
    """
    gz = is_gzip(path)
    try:
        if gz:
            stream = pa.input_stream(str(path), compression="gzip")
            size = None
        else:
            stream = open(path, "rb")  # noqa: SIM115 - closed below
            size = os.fstat(stream.fileno()).st_size
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    line, carry, total = 1, b"", 0
    try:
        while True:
            chunk = _read(path, stream, block_size)
            total += len(chunk)
            if not chunk:
                break
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
            else:
                carry = data[cut:]
                block = data[:cut] if cut < len(data) else data
                yield line, block
                line += block.count(b"\n")
            if len(carry) > max_line:
                raise InputError(path, f"has a line longer than {max_line:,} bytes", line=line,
                                 hint="a TREC line holds a few short fields")
        if size is not None and size != total:
            raise InputError(path, "changed while it was read (its size is not what it was "
                                   "when reading began)")
        if carry:
            yield line, carry
    finally:
        stream.close()


def _read(path: Path, stream, size: int) -> bytes:
    try:
        return stream.read(size)
    except (OSError, pa.ArrowInvalid, EOFError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(path, f"cannot be read ({reason})") from None


# ------------------------------------------------------------------------------ splitting blocks
def split_block(path: Path, first_line: int, data: bytes, layout: Layout,
                fast: bool = True) -> Fields:
    """The fields ``layout`` wants from a block of whole lines; the fast way when the block is
    regular (and ``fast``), else the general way."""
    if fast:
        delimiter = regular_delimiter(data)
        if delimiter is not None:
            fields = _fast(first_line, data, layout, delimiter)
            if fields is not None:
                return fields
    return _general(path, first_line, data, layout)


def regular_delimiter(data: bytes) -> bytes | None:
    """b' ' or b'\\t' when the block's whitespace is that byte between fields and ``\\n`` at line
    ends only, and it is valid UTF-8 without NUL: a one-byte-delimited parse then splits it as the
    definition does. None otherwise."""
    if not data or data[:1] == b"#" or b"\n#" in data:
        return None
    if any(b in data for b in (b"\r", b"\x0b", b"\x0c", b"\x00")):
        return None
    tab, space = b"\t" in data, b" " in data
    if tab and space:
        return None
    delimiter = b"\t" if tab else b" "
    raw = np.frombuffer(data, dtype=np.uint8)
    blank = raw <= 32  # after the checks above: the delimiter and newlines
    if blank[0] or (blank[-1] and raw[-1] != 10) or (blank[1:] & blank[:-1]).any():
        return None  # a leading, trailing or doubled separator, or a blank line
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return delimiter


def _fast(first_line: int, data: bytes, layout: Layout, delimiter: bytes) -> Fields | None:
    names = [f"c{i}" for i in range(layout.fields)]
    types = {f"c{i}": pa.string() for i in layout.strings}
    types.update({f"c{i}": pa.float64() for i in layout.numbers})
    types.update({f"c{i}": pa.string() for i in layout.integers})
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=len(data) + 1,
                                           use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter=delimiter.decode(), quote_char=False,
                                             double_quote=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types=types, include_columns=list(types), null_values=[],
                true_values=[], false_values=[], strings_can_be_null=False,
                quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # a line with another number of fields, or a token that is not a number
    columns: dict = {}
    for i in layout.strings:
        columns[i] = table.column(f"c{i}").combine_chunks()
    for i, what in layout.numbers.items():
        values = table.column(f"c{i}").to_numpy()
        if not (valid_grades(values) if what == "grade" else np.isfinite(values)).all():
            return None  # the general way names the line
        columns[i] = values
    for i in layout.integers:
        columns[i] = parse_integers(table.column(f"c{i}").combine_chunks())
    return Fields(np.arange(first_line, first_line + table.num_rows, dtype=np.int64), columns)


def _general(path: Path, first_line: int, data: bytes, layout: Layout) -> Fields:
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10) + 1
    offsets = np.concatenate([[0], ends, [len(data)] if not len(ends) or ends[-1] != len(data)
                              else []]).astype(np.int32)
    lines = pa.Array.from_buffers(pa.binary(), len(offsets) - 1,
                                  [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    numbers = np.arange(first_line, first_line + len(lines), dtype=np.int64)
    # Lines past a NUL byte or invalid UTF-8 are not looked at: that line is the error, unless
    # an earlier line is wrong.
    stop, stop_error = len(lines), None
    nul = data.find(b"\x00")
    if nul >= 0:
        stop = int(np.searchsorted(offsets, nul, side="right")) - 1
        stop_error = "holds a NUL byte (is it a text file?)"
    try:
        text = lines[:stop].cast(pa.string())
    except pa.ArrowInvalid:
        stop = next(i for i, ln in enumerate(lines[:stop].to_pylist()) if not _utf8(ln))
        stop_error = "is not valid UTF-8"
        text = lines[:stop].cast(pa.string())
    fields = _fields(path, numbers[:stop], text, layout)
    if stop_error is not None:
        raise InputError(path, stop_error, line=int(numbers[stop]))
    return fields


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _fields(path: Path, numbers: np.ndarray, text: pa.Array, layout: Layout) -> Fields:
    trimmed = pc.ascii_trim_whitespace(text)
    keep = pc.and_(pc.greater(pc.binary_length(trimmed), 0),
                   pc.invert(pc.starts_with(trimmed, "#"))).to_numpy(zero_copy_only=False)
    trimmed, numbers = arrow.filter(trimmed, keep), numbers[keep]
    parts = pc.ascii_split_whitespace(trimmed)
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    bad = counts < layout.fields
    if layout.exact:
        bad |= counts > layout.fields
    count_error = int(np.flatnonzero(bad)[0]) if bad.any() else len(numbers)
    # A number that is not one, on a line before the first line with a wrong field count,
    # comes first.
    columns: dict = {}
    good = slice(0, count_error)
    for i, what in layout.numbers.items():
        tokens = pc.list_element(parts[good], i)
        try:
            columns[i] = _numbers(path, tokens, numbers[good], what)
        except NotANumber as exc:
            _numbers(path, tokens[:exc.index], numbers[:exc.index], what)  # an earlier error?
            raise InputError(path, f"{what} {exc.token!r} is not a number",
                             line=int(numbers[exc.index])) from None
    if count_error < len(numbers):
        found = int(counts[count_error])
        raise InputError(path, f"expected {layout.expected}, found {found} "
                               f"field{'s' if found != 1 else ''}",
                         line=int(numbers[count_error]))
    for i in layout.strings:
        columns[i] = pc.list_element(parts, i)
    for i in layout.integers:
        columns[i] = parse_integers(pc.list_element(parts, i))
    extra = 0 if layout.exact else int((counts > layout.fields).sum())
    return Fields(numbers, columns, extra)


def _numbers(path: Path, tokens: pa.Array, lines: np.ndarray, what: str) -> np.ndarray:
    """Scores (finite) or grades (integers in range) of tokens; NotANumber for a token that is
    not a number, InputError for a number that is not a valid score or grade."""
    values = cast_floats(tokens)
    if what == "grade":
        return integral_grades(values, source=str(path), lines=lines)
    if not np.isfinite(values).all():
        check_finite(values, source=str(path), lines=lines, texts=tokens.to_pylist())
    return values


def parse_integers(tokens: pa.Array) -> np.ndarray | None:
    """Integers, or None when some token is not one (rank columns are informative only)."""
    try:
        return tokens.cast(pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
