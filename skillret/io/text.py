"""TREC runs (`qid Q0 docid rank score tag`) and qrels (`qid iter docid grade`): whitespace-
separated text, split as trec_eval splits it. Unlike trec_eval's `atof`, a score that is not a
finite number is an error, not a silent 0.

A field is a maximal run of bytes other than ASCII whitespace (`bytes.split()`), so U+00A0 and
the like belong to an id. The file must be UTF-8 without NUL; lines without fields and lines
starting with `#` are skipped; a wrong field count (run: >= 6, qrels: exactly 4) is an error
naming its line.

`split_block` has two ways: the fast one hands a regular block (one of space/tab only, no
NUL/CR/VT/FF, no `#` line) to pyarrow's CSV parser, which then gives the same fields; the
general one applies the definition with Arrow's whitespace kernels. A block either refuses is
checked line by line for the error to raise. `tests/io/test_tokenizer.py` holds both ways to a
pure-Python statement of the rule.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from skillret.columnar import arrow
from skillret.columnar.convert import (NotANumber, cast_floats, check_finite, integral_grades,
                                       parse_integers, valid_grades)
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import RowBatch
from skillret.errors import InputError
from skillret.io.sniff import GZIP, starts_with, unreadable

BLOCK_SIZE = 8 << 20
#: How far back from a block's end its last group's start is looked for, in lines.
GROUP_LINES = 4096
#: Threads splitting blocks (pyarrow and numpy release the GIL).
PARSERS = min(2, os.cpu_count() or 1)
#: Longer lines are an error, not an ever-growing buffer (a small gzip may expand hugely).
MAX_LINE = 1 << 20


@dataclass(frozen=True)
class Layout:
    """What a line holds: `exact` forbids fields beyond `fields` (else they are counted);
    `numbers` maps field to "score" (finite) or "grade" (integer in range); `integers` are
    int64, or None when a token is not one."""

    fields: int
    exact: bool
    expected: str
    strings: tuple[int, ...]
    numbers: dict[int, str]
    integers: tuple[int, ...] = ()


@dataclass
class Fields:
    """A block's data lines: 1-based `line` numbers, `columns` by field index, and `extra`
    lines with more fields than wanted."""

    line: np.ndarray
    columns: dict
    extra: int = 0
    lines: int = 0                # lines the block held (data, blank and comment)
    ends_group: bool = False      # the last query has no line in the next block


# ------------------------------------------------------------------------------ reading blocks
def read_fields(path: Path, layout: Layout, *, block_size: int = BLOCK_SIZE) -> Iterator[Fields]:
    """The fields `layout` wants, block by block, in order, split by `PARSERS` threads.

    Threads number each block from line 1; it is shifted here. A block whose split fails is
    split again with its real first line, so the error names the file's line.
    """
    first, too_long, pending = 1, False, deque()
    pool = ThreadPoolExecutor(PARSERS, thread_name_prefix="skillret-parse")
    try:
        for data, ends_group in blocks(path, block_size):
            if data is None:  # a line too long: the lines before it are checked first
                too_long = True
                break
            pending.append((pool.submit(split_block, path, 1, data, layout), data, ends_group))
            if len(pending) > PARSERS:
                first = yield from _placed(path, layout, pending.popleft(), first)
        while pending:
            first = yield from _placed(path, layout, pending.popleft(), first)
    finally:
        pool.shutdown(cancel_futures=True)
    if too_long:
        raise InputError(path, f"has a line longer than {MAX_LINE:,} bytes", line=first,
                         hint="a TREC line holds a few short fields")


def _placed(path: Path, layout: Layout, parsed, first: int):
    """Yield a thread's block renumbered from `first`; return the next block's first line."""
    future, data, ends_group = parsed
    try:
        fields = future.result()
    except InputError:  # split again where its line numbers are right
        fields = split_block(path, first, data, layout)
    else:
        fields.line += first - 1
    fields.ends_group = ends_group
    if len(fields.line):  # a block of blank and comment lines only yields nothing
        yield fields
    return first + fields.lines


def blocks(path: Path, block_size: int = BLOCK_SIZE) -> Iterator[tuple[bytearray | None, bool]]:
    """(whole lines, ends a group) through the file, about `block_size` bytes each; `(None,
    True)` last at a line longer than `MAX_LINE`.

    Each block is a new `bytearray` (parsed arrays may point into it). The last group (lines
    sharing their first field) moves to the next block when it starts within `GROUP_LINES`
    lines of the end; the block then ends a group. A file whose size changes while read is an
    error.
    """
    try:
        if starts_with(path, GZIP):
            stream, size = pa.input_stream(str(path), compression="gzip"), None
        else:
            stream = open(path, "rb")  # noqa: SIM115 - closed below
            size = os.fstat(stream.fileno()).st_size
    except OSError as exc:
        raise unreadable(path, exc) from None
    carry, total, pending = b"", 0, None  # yielded once the next read shows if it is last
    try:
        while True:
            # no larger than what is left (+1 byte shows growth): no zeroing a whole block_size
            want = block_size if size is None else min(block_size, max(size - total, 0) + 1)
            block = bytearray(len(carry) + want)
            block[:len(carry)] = carry
            try:  # a buffered file and a decompressing stream read on until full or at the end
                got = stream.readinto(memoryview(block)[len(carry):])
            except (OSError, pa.ArrowInvalid, EOFError) as exc:
                raise unreadable(path, exc) from None
            total += got
            if not got:
                break
            del block[len(carry) + got:]
            cut = block.rfind(b"\n") + 1
            too_long = len(block) - cut > MAX_LINE
            group = last_group_start(block, cut, GROUP_LINES) if cut and not too_long else None
            cut = group or cut
            carry = bytes(block[cut:])
            if cut:
                del block[cut:]
                if pending is not None:
                    yield pending
                pending = block, group is not None
            if too_long:
                if pending is not None:
                    yield pending  # so the lines before it are counted
                yield None, True
                return
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
    """Where the last group of `data[:end]` starts (blank and comment lines join the group
    they follow); None when not found within `limit` lines."""
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


# ------------------------------------------------------------------------------ splitting blocks
def split_block(path: Path, first_line: int, data: bytes | bytearray, layout: Layout) -> Fields:
    """The fields `layout` wants from whole lines: the fast way if regular, else general; a
    block with a wrong line is an InputError naming the first."""
    return (fast_fields(first_line, data, layout) or _general(first_line, data, layout)
            or _first_error(path, first_line, data, layout))


def fast_fields(first_line: int, data: bytes | bytearray, layout: Layout) -> Fields | None:
    """None when the block is not regular: it must use one delimiter (b' ' or b'\t'), with no
    CR, VT, FF, NUL or `#` line; a blank line or a doubled/leading/trailing delimiter shows as a
    wrong value count or an empty value; invalid UTF-8 or numbers fail the parse."""
    if not data or data[:1] == b"#" or (b"#" in data and b"\n#" in data):
        return None
    if any(b in data for b in (b"\r", b"\x0b", b"\x0c", b"\x00")):
        return None
    tab, space = b"\t" in data, b" " in data
    if tab and space:
        return None
    text_type = pa.binary() if data.isascii() else pa.string()  # ASCII is valid UTF-8
    types = {f"c{i}": pa.float64() if i in layout.numbers else text_type
             for i in range(layout.fields)}
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=list(types), block_size=len(data) + 1,
                                           use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter="\t" if tab else " ", quote_char=False,
                                             double_quote=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types=types, null_values=[], true_values=[], false_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    def column(i: int) -> pa.Array:
        return table.column(f"c{i}").combine_chunks()

    if table.num_rows and any(pc.min(pc.binary_length(column(i))).as_py() == 0
                              for i in range(layout.fields) if i not in layout.numbers):
        return None  # an empty value: a doubled, leading or trailing delimiter
    return _fields(column, layout,
                   np.arange(first_line, first_line + table.num_rows, dtype=np.int64),
                   lines=table.num_rows)


def _general(first_line: int, data: bytes | bytearray, layout: Layout) -> Fields | None:
    """The definition: each line trimmed and split at runs of ASCII whitespace; None when a line
    is wrong."""
    if b"\x00" in data:
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10) + 1
    offsets = np.concatenate([[0], ends, [len(data)] if not len(ends) or ends[-1] != len(data)
                              else []]).astype(np.int32)
    lines = pa.Array.from_buffers(pa.binary(), len(offsets) - 1,
                                  [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    try:
        trimmed = pc.ascii_trim_whitespace(lines.cast(pa.string()))
    except pa.ArrowInvalid:  # not UTF-8
        return None
    keep = (arrow.to_numpy(pc.binary_length(trimmed)) > 0) & ~arrow.to_numpy(
        pc.starts_with(trimmed, "#"))
    parts = pc.ascii_split_whitespace(arrow.filter(trimmed, keep))
    counts = arrow.to_numpy(pc.list_value_length(parts))
    if (counts < layout.fields).any() or (layout.exact and (counts > layout.fields).any()):
        return None
    return _fields(lambda i: pc.list_element(parts, arrow.scalar(i)), layout,
                   np.arange(first_line, first_line + len(lines), dtype=np.int64)[keep],
                   extra=0 if layout.exact else int((counts > layout.fields).sum()),
                   lines=len(lines))


def _fields(tokens, layout: Layout, numbers: np.ndarray, **counts) -> Fields | None:
    """The columns `layout` wants of `tokens(i)` (field i's tokens) on lines `numbers`; None for
    an invalid number."""
    columns: dict = {}
    for i, what in layout.numbers.items():
        try:
            values = arrow.to_numpy(tokens(i).cast(pa.float64()))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        if not (valid_grades(values) if what == "grade" else np.isfinite(values)).all():
            return None
        columns[i] = values
    for i in layout.strings:
        columns[i] = tokens(i).view(pa.string())
    for i in layout.integers:
        columns[i] = parse_integers(tokens(i).view(pa.string()))
    return Fields(numbers, columns, **counts)


def _first_error(path: Path, first_line: int, data: bytes | bytearray, layout: Layout):
    """InputError for the first wrong line, checked line by line as the definition says."""
    for number, line in enumerate(bytes(data).split(b"\n"), first_line):
        if b"\x00" in line:
            raise InputError(path, "holds a NUL byte (is it a text file?)", line=number)
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(path, "is not valid UTF-8", line=number) from None
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) < layout.fields or (layout.exact and len(fields) > layout.fields):
            raise InputError(path, f"expected {layout.expected}, found {len(fields)} "
                                   f"field{'s' if len(fields) != 1 else ''}", line=number)
        for i, what in layout.numbers.items():
            token = fields[i].decode()
            try:
                values = cast_floats(arrow.strings([token]))
            except NotANumber:
                raise InputError(path, f"{what} {token!r} is not a number", line=number) from None
            if what == "grade":
                integral_grades(values, source=str(path), lines=[number])
            check_finite(values, source=str(path), lines=[number], texts=[token])
    raise AssertionError("a block refused has a wrong line")  # pragma: no cover


# ------------------------------------------------------------------------------ TREC files
RUN_LAYOUT = Layout(6, exact=False, expected="6 fields: qid Q0 skill_id rank score tag",
                    strings=(0, 2), numbers={4: "score"})
RANKED_RUN_LAYOUT = replace(RUN_LAYOUT, integers=(3,))
QRELS_LAYOUT = Layout(4, exact=True, expected="4 fields: qid iter skill_id grade",
                      strings=(0, 2), numbers={3: "grade"})


def run_batches(path: Path, *, with_rank: bool = False, **read) -> Iterator[RowBatch]:
    """Row batches of a TREC run in file order, one per block; InputError if it holds none.
    `read`: options of `read_fields` (`block_size`)."""
    rows = 0
    for fields in read_fields(path, RANKED_RUN_LAYOUT if with_rank else RUN_LAYOUT, **read):
        rows += len(fields.line)
        yield RowBatch(fields.columns[0], fields.columns[2], fields.columns[4], fields.line,
                       fields.columns.get(3), ends_query=fields.ends_group,
                       extra_fields=fields.extra)
    if not rows:
        raise InputError(path, "holds no results (only blank or comment lines)")


#: Rows held before exact repeats are dropped (then twice the rows kept: O(log n) passes).
COMPACT_ROWS = 1 << 21


def read_qrels(path: Path, *, block_size: int = BLOCK_SIZE) -> Qrels:
    """Judgments of a TREC qrels file. Exact repeats are dropped as they pile up (a small gzip
    repeating a line by the GB stays small) and counted as duplicates."""
    parts, rows, repeats, limit = [], 0, 0, COMPACT_ROWS
    for fields in read_fields(path, QRELS_LAYOUT, block_size=block_size):
        parts.append((fields.columns[0], fields.columns[2], fields.columns[3].astype(np.int64),
                      fields.line))  # grades checked by `read_fields`
        rows += len(fields.line)
        if rows > limit:
            qids, sids, grades, numbers = _concat(parts)
            table = pa.table({"q": qids, "s": sids, "g": grades, "i": np.arange(rows)})
            first = table.group_by(["q", "s", "g"]).aggregate([("i", "min")]).column("i_min")
            kept = np.sort(arrow.to_numpy(first.combine_chunks()))
            repeats += len(grades) - len(kept)
            parts = [(qids.take(kept), sids.take(kept), grades[kept], numbers[kept])]
            rows = len(kept)
            limit = max(limit, 2 * rows)
    if not parts:
        raise InputError(path, "holds no judgments (only blank or comment lines)")
    qids, sids, grades, numbers = _concat(parts)
    qrels = Qrels.from_columns(qids, sids, grades, source=str(path), lines=numbers)
    return replace(qrels, duplicates=qrels.duplicates + repeats) if repeats else qrels


def _concat(parts: list) -> tuple:
    qids, sids, grades, numbers = zip(*parts)
    return (pa.chunked_array(qids, pa.string()).combine_chunks(),
            pa.chunked_array(sids, pa.string()).combine_chunks(), np.concatenate(grades),
            np.concatenate(numbers))
