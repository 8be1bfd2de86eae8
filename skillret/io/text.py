"""Whitespace-separated text (TREC runs and qrels): one definition of a field, two ways to apply
it.

The definition (trec_eval's, which splits lines with C's `isspace`):

* the file is UTF-8 text, cut into lines at `\\n`; a NUL byte or invalid UTF-8 anywhere is an
  error naming its line;
* a line's fields are its maximal runs of bytes other than ASCII whitespace (space, tab, CR, VT,
  FF): Python's `bytes.split()`. Every other byte belongs to a field, so U+00A0, U+3000,
  U+2028 or U+0085 inside an id are part of the id. A doubled, leading or trailing blank only
  separates; there is no empty field, and a line whose fields then number other than the format
  wants (a run: at least 6; qrels: exactly 4) is an error naming its line;
* a line without fields is blank, and a line whose first field starts with `#` is a comment:
  both are skipped.

Reading: `blocks` reads the file (plain or gzip) with ordinary buffered reads, in blocks of
whole lines, each cut where possible where its last query's lines start (so that a query's rows
are in one block). `split_block` turns a block into the wanted fields:

* the *fast* way hands a *regular* block to pyarrow's CSV parser with a one-byte delimiter.
  Regular: the block holds no NUL, CR, VT or FF, uses one of space and tab only, no line starts
  with `#`, and the parse finds on every line the wanted number of values, none empty, all
  valid UTF-8, numbers valid. Under those conditions a one-byte-delimited split and the
  definition give the same fields;
* the *general* way applies the definition with Arrow's ASCII whitespace kernels, and names the
  first wrong line of the block. Every error about what a line holds comes from here.

`tests/test_tokenizer.py` holds both ways to a pure-Python statement of the definition on
generated files with odd and bad lines anywhere, at any block size.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from skillret.columnar import arrow
from skillret.columnar.convert import (NotANumber, cast_floats, check_finite, integral_grades,
                                       valid_grades)
from skillret.errors import InputError
from skillret.io.sniff import is_gzip

#: Bytes per block read (the last line of a block is completed from the next read).
BLOCK_SIZE = 8 << 20
#: How many lines back from a block's end the start of its last group is looked for.
GROUP_LINES = 4096
#: Threads splitting blocks (docs/benchmarks.md has what the second one gains); more than
#: the machine's cores would only compete.
PARSERS = min(2, os.cpu_count() or 1)
#: The longest line accepted: longer is an error, not an ever-growing buffer (a compressed file
#: of a few MB may expand to gigabytes without a newline).
MAX_LINE = 1 << 20


@dataclass(frozen=True)
class Layout:
    """What a line holds: `fields` wanted (`exact`: no more; else more are ignored and
    counted), `expected` for messages, and the fields to return: `strings` as text,
    `numbers` as float64, each a `"score"` (finite) or a `"grade"` (an integer in range),
    `integers` as int64 when every token is one (else None: a rank is informative only)."""

    fields: int
    exact: bool
    expected: str
    strings: tuple[int, ...]
    numbers: dict[int, str]
    integers: tuple[int, ...] = ()


@dataclass
class Fields:
    """The fields of a block's data lines: `line` (1-based numbers), `columns` by field index
    (string arrays, float64 numpy arrays, int64 numpy or None for `integers`), and how many
    lines had fields beyond the wanted ones."""

    line: np.ndarray
    columns: dict
    extra: int = 0
    lines: int = 0                # lines the block held (data, blank and comment)
    ends_group: bool = False      # the last query has no line in the next block


# ------------------------------------------------------------------------------ reading blocks
class LineTooLong(Exception):
    """Raised by `blocks`; `read_fields` names the line."""


def read_fields(path: Path, layout: Layout, *, block_size: int = BLOCK_SIZE,
                max_line: int = MAX_LINE, fast: bool = True,
                parsers: int | None = None) -> Iterator[Fields]:
    """The fields `layout` wants, block by block through the file, in order.

    Blocks are split by `parsers` threads (default `PARSERS`; pyarrow's parser and
    numpy release the GIL), each block numbered from line 1 and shifted here, in order, to its
    place in the file. A block whose split fails is split again here with its real first line,
    so that the error names the line of the file.
    """
    parsers = PARSERS if parsers is None else parsers
    if parsers > 1 and _one_block(path, block_size):
        parsers = 1  # nothing to split beside it: no threads to start
    first = 1
    try:
        if parsers <= 1:
            for data, ends_group in blocks(path, block_size, max_line):
                fields = split_block(path, first, data, layout, fast=fast)
                fields.ends_group = ends_group
                first += fields.lines
                yield fields
            return
        with ThreadPoolExecutor(parsers, thread_name_prefix="skillret-parse") as pool:
            pending: deque = deque()
            try:
                try:
                    for data, ends_group in blocks(path, block_size, max_line):
                        pending.append((pool.submit(split_block, path, 1, data, layout, fast),
                                        data, ends_group))
                        if len(pending) > parsers:
                            first = yield from _placed(path, layout, fast, pending.popleft(),
                                                       first)
                except LineTooLong:  # the lines before it are counted (and checked) first
                    while pending:
                        first = yield from _placed(path, layout, fast, pending.popleft(), first)
                    raise
                while pending:
                    first = yield from _placed(path, layout, fast, pending.popleft(), first)
            finally:
                for future, _, _ in pending:
                    future.cancel()
    except LineTooLong:
        raise InputError(path, f"has a line longer than {max_line:,} bytes", line=first,
                         hint="a TREC line holds a few short fields") from None


def _one_block(path: Path, block_size: int) -> bool:
    """The file is plain and holds one block at most (a gzip file's size is not known)."""
    try:
        return not is_gzip(path) and os.path.getsize(path) <= block_size
    except OSError:
        return False  # reading it says why


def _placed(path: Path, layout: Layout, fast: bool, parsed, first: int):
    """Yield a block split by a parser thread with its lines numbered from `first`; return
    the first line of the next block."""
    future, data, ends_group = parsed
    try:
        fields = future.result()
    except InputError:  # split again where its line numbers are right
        fields = split_block(path, first, data, layout, fast=fast)
    else:
        fields.line += first - 1
    fields.ends_group = ends_group
    yield fields
    return first + fields.lines


def blocks(path: Path, block_size: int = BLOCK_SIZE, max_line: int = MAX_LINE,
           group_lines: int = GROUP_LINES) -> Iterator[tuple[bytearray, bool]]:
    """(whole lines, ends a group) through the file, in order, about `block_size` bytes at a
    time.

    A plain file is read with `readinto`, a gzip one through pyarrow's decompressing stream;
    each block is a new `bytearray` (what is parsed from it may keep pointing into it). The
    partial line at a block's end moves to the next block, and so do the lines of its last group
    (lines sharing their first field: a query's results) when they start within `group_lines`
    lines of the end: the block then *ends a group*, its last query has no line in the next
    block. A file whose size changes while it is read is an error, not a signal or a silent cut.
    """
    try:
        if is_gzip(path):
            stream, size = pa.input_stream(str(path), compression="gzip"), None
        else:
            stream = open(path, "rb")  # noqa: SIM115 - closed below
            size = os.fstat(stream.fileno()).st_size
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    carry, total, pending = b"", 0, None  # a block is yielded once the next read shows
    try:                                  # whether it is the last
        while True:
            # a plain file's size is known: no block is larger than what is left (plus a byte
            # that tells whether the file grew), so a small file or a last block does not zero
            # (page-fault) a whole block_size, nor does the read that finds the end
            want = block_size if size is None else min(block_size, max(size - total, 0) + 1)
            block = bytearray(len(carry) + want)
            block[:len(carry)] = carry
            got = _read_into(path, stream, memoryview(block)[len(carry):])
            total += got
            if not got:
                break
            del block[len(carry) + got:]
            cut = block.rfind(b"\n") + 1
            too_long = len(block) - cut > max_line
            group = last_group_start(block, cut, group_lines) if cut and not too_long else None
            if group:
                cut = group
            carry = bytes(block[cut:])
            if cut:
                del block[cut:]
                if pending is not None:
                    yield pending
                pending = block, group is not None
            if too_long:
                if pending is not None:
                    yield pending  # so that the reader has counted the lines before
                raise LineTooLong()
        if size is not None and size != total:
            raise InputError(path, "changed while it was read (its size is not what it was "
                                   "when reading began)")
        if pending is not None:
            yield pending[0], pending[1] or not carry
        if carry:
            yield bytearray(carry), True
    finally:
        stream.close()


def last_group_start(data: bytearray, end: int, limit: int) -> int | None:
    """Where the lines of the last group of `data[:end]` (whole lines) start: just after the
    last line whose first field (as the tokenizer splits it) differs from the last data line's.
    Blank and comment lines belong to the group they follow. None when no such line is found
    within `limit` lines."""
    key, pos = None, end
    for _ in range(limit):
        start = data.rfind(b"\n", 0, pos - 1) + 1
        fields = data[start:pos].split(None, 1)
        if fields and not fields[0].startswith(b"#"):
            if key is None:
                key = fields[0]
            elif fields[0] != key:
                return pos
        if start == 0:
            return None
        pos = start
    return None


def _read_into(path: Path, stream, view: memoryview) -> int:
    """Fill `view` as far as the file goes; the number of bytes read."""
    filled = 0
    try:
        while filled < len(view):
            got = stream.readinto(view[filled:])
            if not got:
                break
            filled += got
    except (OSError, pa.ArrowInvalid, EOFError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(path, f"cannot be read ({reason})") from None
    return filled


# ------------------------------------------------------------------------------ splitting blocks
def split_block(path: Path, first_line: int, data: bytes | bytearray, layout: Layout,
                fast: bool = True) -> Fields:
    """The fields `layout` wants from a block of whole lines; the fast way when the block is
    regular (and `fast`), else the general way."""
    fields = fast_fields(first_line, data, layout) if fast else None
    return fields if fields is not None else _general(path, first_line, data, layout)


def fast_fields(first_line: int, data: bytes | bytearray, layout: Layout) -> Fields | None:
    """The fields of a regular block by the fast way; None when the block is not regular."""
    delimiter = regular_delimiter(data)
    return None if delimiter is None else _fast(first_line, data, layout, delimiter)


def regular_delimiter(data: bytes | bytearray) -> bytes | None:
    """b' ' or b'\t' when the block may go to the CSV parser split by that byte: it uses one
    of the two only, holds no CR, VT, FF or NUL, and no line starts with `#`. The parse then
    settles the rest (`_fast`). None otherwise."""
    if not data or data[:1] == b"#" or (b"#" in data and b"\n#" in data):
        return None
    if any(b in data for b in (b"\r", b"\x0b", b"\x0c", b"\x00")):
        return None
    tab, space = b"\t" in data, b" " in data
    if tab and space:
        return None
    return b"\t" if tab else b" "


def _fast(first_line: int, data: bytes | bytearray, layout: Layout, delimiter: bytes
          ) -> Fields | None:
    """The block's fields by pyarrow's CSV parser, or None when the block is not regular.

    With one delimiter byte and no other whitespace but line ends, the CSV split is the
    definition's exactly when every line has `layout.fields` values and none is empty: a
    blank line, a doubled, leading or trailing delimiter shows up as a wrong value count or an
    empty value. Every value is converted (text is checked to be UTF-8 as it is), numbers must
    be valid scores or grades.
    """
    names = [f"c{i}" for i in range(layout.fields)]
    # ASCII text is UTF-8 as it stands: read as bytes (no validation), viewed as text after.
    text_type = pa.binary() if data.isascii() else pa.string()
    types = {name: text_type for name in names}
    types.update({f"c{i}": pa.float64() for i in layout.numbers})
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=len(data) + 1,
                                           use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter=delimiter.decode(), quote_char=False,
                                             double_quote=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types=types, null_values=[], true_values=[], false_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # a line with another number of values, a value that is not a number or
        # not UTF-8
    columns: dict = {}
    for i in range(layout.fields):
        column = table.column(f"c{i}").combine_chunks()
        if i in layout.numbers:
            values = arrow.to_numpy(column)
            valid = valid_grades(values) if layout.numbers[i] == "grade" else np.isfinite(values)
            if not valid.all():
                return None  # the general way names the line
            columns[i] = values
            continue
        if len(column) and pc.min(pc.binary_length(column)).as_py() == 0:
            return None  # an empty value: a doubled, leading or trailing delimiter
        if i in layout.strings:
            columns[i] = column.view(pa.string())
        elif i in layout.integers:
            columns[i] = parse_integers(column.view(pa.string()))
    return Fields(np.arange(first_line, first_line + table.num_rows, dtype=np.int64), columns,
                  lines=table.num_rows)


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
    fields.lines = len(lines)
    return fields


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _fields(path: Path, numbers: np.ndarray, text: pa.Array, layout: Layout) -> Fields:
    trimmed = pc.ascii_trim_whitespace(text)
    keep = (arrow.to_numpy(pc.binary_length(trimmed)) > 0) & ~arrow.to_numpy(
        pc.starts_with(trimmed, "#"))
    trimmed, numbers = arrow.filter(trimmed, keep), numbers[keep]
    parts = pc.ascii_split_whitespace(trimmed)
    counts = arrow.to_numpy(pc.list_value_length(parts))
    bad = counts < layout.fields
    if layout.exact:
        bad |= counts > layout.fields
    count_error = int(np.flatnonzero(bad)[0]) if bad.any() else len(numbers)
    # A number that is not one, on a line before the first line with a wrong field count,
    # comes first.
    columns: dict = {}
    good = slice(0, count_error)
    for i, what in layout.numbers.items():
        tokens = pc.list_element(parts[good], arrow.scalar(i))
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
        columns[i] = pc.list_element(parts, arrow.scalar(i))
    for i in layout.integers:
        columns[i] = parse_integers(pc.list_element(parts, arrow.scalar(i)))
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
    """Integers; float64 when some token is a number but not an integer (a score in the rank
    column: validation says the columns look swapped); None when some token is not a number
    (rank columns are informative only)."""
    try:
        return arrow.to_numpy(tokens.cast(pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    try:  # no token-by-token search for the offender: a rank is informative only
        return arrow.to_numpy(pc.cast(tokens, pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
