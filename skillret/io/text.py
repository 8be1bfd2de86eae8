"""Line-oriented text through pyarrow: plain or gzip, streamed in blocks, no Python object per row.

Two ways to read whitespace-separated columns:

* the fast path hands the file to pyarrow's CSV parser with a one-character delimiter; it
  applies when the first lines are regular (one space or one tab between fields, no leading
  blanks, no comments), and every row is then exactly one line. A plain file is memory-mapped
  and parsed block by block, each block cut where the first field changes, so that a query's
  rows never straddle two blocks (see :class:`MappedFile`); gzip is streamed;
* the general path reads whole lines and splits them on runs of whitespace, skipping blank lines
  and ``#`` comments as trec_eval does. It is slower, knows every line's number, and produces the
  precise error message when a line is wrong.

When the fast path meets a line it cannot parse, reading resumes on the general path at the first
line the fast path has not delivered, so a caller never sees a row twice.
"""

from __future__ import annotations

import mmap
import os
from collections import deque
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from .. import arrow as pc
from ..convert import NotANumber, cast_floats
from ..errors import InputError
from .sniff import head_bytes, is_gzip

T = TypeVar("T")

#: Text per block when streaming gzip: small blocks keep pyarrow's read-ahead (about 40 blocks)
#: small.
BLOCK_SIZE = 4 << 20
#: Text per block of a memory-mapped file (nothing is read ahead).
MAPPED_BLOCK_SIZE = 8 << 20
#: Blocks of a mapped file parsed at a time, on as many threads.
PARSERS = 2
#: How many lines :meth:`MappedFile.blocks` walks back to find where a block's last group starts.
GROUP_SEARCH_LINES = 4096


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
                 ) -> Iterator[tuple[int, pa.RecordBatch, bool]]:
    """(first line number, batch, ends group) with the columns in ``types``, named c<i>.

    "Ends group" is true when the batch's last value of the first column does not continue
    into the next batch. A plain file is memory-mapped and parsed in :data:`MAPPED_BLOCK_SIZE`
    blocks cut between groups, :data:`PARSERS` at a time; a gzip file is streamed in
    :data:`BLOCK_SIZE` blocks. Either way memory stays bounded.
    """
    names = [f"c{i}" for i in range(ncols)]
    parse_options = pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                       escape_char=False, newlines_in_values=False,
                                       ignore_empty_lines=False)
    convert_options = pacsv.ConvertOptions(
        column_types={f"c{i}": t for i, t in types.items()},
        include_columns=[f"c{i}" for i in sorted(types)],
        null_values=[], true_values=[], false_values=[], strings_can_be_null=False,
        quoted_strings_can_be_null=False)
    options = dict(parse_options=parse_options, convert_options=convert_options)
    line = 1
    if not is_gzip(path):
        def parse(block: Block) -> list[pa.RecordBatch]:
            table = pacsv.read_csv(pa.BufferReader(block.data), read_options=pacsv.ReadOptions(
                column_names=names, block_size=len(block.data) + 1, use_threads=False),
                **options)
            return table.combine_chunks().to_batches()

        for block, batches in MappedFile(path).parsed(delimiter.encode(), parse):
            for batch in batches:
                yield line, batch, block.ends_group
                line += batch.num_rows
        return
    # One parsing thread: the scoring thread has the other core (see prefetch.py).
    batches = pacsv.open_csv(open_stream(path), read_options=pacsv.ReadOptions(
        column_names=names, block_size=BLOCK_SIZE, use_threads=False), **options)
    for batch in batches:
        yield line, batch, False
        line += batch.num_rows


class Block:
    """Whole lines of a mapped file, ending at byte ``end``; ``ends_group``: the next line
    starts another group."""

    def __init__(self, data: pa.Buffer, end: int, ends_group: bool):
        self.data = data
        self.end = end
        self.ends_group = ends_group


class MappedFile:
    """A plain file, memory-mapped: no read copies it, and :meth:`release` drops the pages
    already parsed from the process (``madvise``), so memory stays flat however large it is."""

    def __init__(self, path: Path):
        with open(path, "rb") as fh:
            self.size = os.fstat(fh.fileno()).st_size
            self.mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if self.size \
                else None
        self.released = 0

    def blocks(self, delimiter: bytes) -> Iterator[Block]:
        """Blocks of whole lines, each ending where possible between two groups of lines
        (lines that share their first field, up to ``delimiter``).

        A block is :data:`MAPPED_BLOCK_SIZE` bytes or less, unless one line is longer; when a
        single group fills a block, the block ends at a line and ``ends_group`` is false.
        """
        mapped, size, pos = self.mapped, self.size, 0
        view = memoryview(mapped) if mapped is not None else None
        while pos < size:
            end = min(pos + MAPPED_BLOCK_SIZE, size)
            ends_group = end == size
            if not ends_group:
                newline = mapped.rfind(b"\n", pos, end)
                if newline < 0:  # a line longer than a block: take it whole
                    newline = mapped.find(b"\n", end)
                end = size if newline < 0 else newline + 1
                ends_group = end == size
            if not ends_group:
                start = _last_group_start(mapped, pos, end, delimiter)
                if start > pos:
                    end, ends_group = start, True
            yield Block(pa.py_buffer(view[pos:end]), end, ends_group)
            pos = end

    def release(self, upto: int) -> None:
        """Drop the pages before byte ``upto`` from memory (they stay in the page cache)."""
        page = upto // mmap.PAGESIZE * mmap.PAGESIZE
        if page > self.released and hasattr(self.mapped, "madvise"):
            self.mapped.madvise(mmap.MADV_DONTNEED, self.released, page - self.released)
            self.released = page

    def parsed(self, delimiter: bytes, parse: Callable[[Block], T]) -> Iterator[tuple[Block, T]]:
        """``(block, parse(block))`` in file order, :data:`PARSERS` blocks parsed at a time
        (pyarrow's parser releases the GIL), each block's pages released once it is parsed."""
        from concurrent.futures import ThreadPoolExecutor

        pending: deque = deque()
        with ThreadPoolExecutor(PARSERS, thread_name_prefix="skillret-parse") as pool:
            try:
                for block in self.blocks(delimiter):
                    pending.append((block, pool.submit(parse, block)))
                    if len(pending) > PARSERS:
                        yield self._done(*pending.popleft())
                while pending:
                    yield self._done(*pending.popleft())
            finally:
                for _, future in pending:
                    future.cancel()

    def _done(self, block: Block, future) -> tuple[Block, object]:
        result = future.result()
        self.release(block.end)
        return block, result


def _last_group_start(mapped: mmap.mmap, pos: int, end: int, delimiter: bytes) -> int:
    """Where the group of the last line in ``mapped[pos:end]`` starts (``pos`` if the group
    fills the span, or is longer than :data:`GROUP_SEARCH_LINES` lines)."""
    newline = mapped.rfind(b"\n", pos, end - 1)
    start = pos if newline < 0 else newline + 1
    cut = mapped.find(delimiter, start, end)
    if cut < 0:
        return pos  # not a regular line; the parser will say so
    key = mapped[start:cut + 1]
    for _ in range(GROUP_SEARCH_LINES):
        if start <= pos:
            return pos
        newline = mapped.rfind(b"\n", pos, start - 1)
        previous = pos if newline < 0 else newline + 1
        if mapped[previous:previous + len(key)] != key:
            return start
        start = previous
    return pos


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
        return cast_floats(tokens)
    except NotANumber as bad:
        raise InputError(path, f"{what} {bad.token!r} is not a number",
                         line=int(numbers[bad.index])) from None


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
