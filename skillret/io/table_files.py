"""Row tables: CSV/TSV with a header, JSON lines, Parquet (and .gz of the text ones), and
tables (DataFrames, Arrow) into runs and qrels. Columns are found by role: the defaults, else a
known alias, unless `columns` names them.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from skillret.columnar import arrow
from skillret.columnar.convert import (NotANumber, cast_floats, check_finite, integral_grades,
                                       parse_integers)
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import RowBatch
from skillret.errors import Fix, InputError
from skillret.io.sniff import (JSON_KINDS, decode_utf8, is_number, json_kind, json_objects,
                               not_utf8, read_bytes)

#: Schema metadata key of tables read from JSON lines.
JSON_ORIGIN = b"skillret.json"
#: Column names by role, the default first.
ALIASES = {
    "query": ("query_id", "qid", "query", "topic", "topic_id", "q_id"),
    "skill": ("skill_id", "doc_id", "docid", "docno", "corpus_id", "pid", "skill", "doc"),
    "score": ("score", "sim", "similarity", "relevance_score"),
    "relevance": ("relevance", "grade", "label", "rel", "judgment", "score"),
    "rank": ("rank",),
}
DEFAULT_COLUMNS = {role: names[0] for role, names in ALIASES.items()}


@contextlib.contextmanager
def parquet_errors(path: Path):
    """InputError for any pyarrow error reading a Parquet file."""
    try:
        yield
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise InputError(path, f"is not a readable Parquet file ({reason})") from None


def content_lines(data: bytes, skip_header: bool, *, lone_cr_ends: bool = False) -> np.ndarray:
    """1-based numbers of the non-blank lines (after the header if `skip_header`).

    With `lone_cr_ends` (CSV/TSV) a lone `\r` also ends a line, as for pyarrow's parser, so
    there is one number per row. Else a line holding only `\r` is blank."""
    if lone_cr_ends:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.append(np.flatnonzero(raw == 10), len(raw))  # the last line may have no end
    starts = np.concatenate([[0], ends[:-1] + 1])
    lengths = ends - starts
    blank = lengths == 0
    if not lone_cr_ends:
        one = np.flatnonzero(lengths == 1)
        blank[one] = raw[starts[one]] == 13
    numbers = np.flatnonzero(~blank).astype(np.int64) + 1
    return numbers[1:] if skip_header and len(numbers) else numbers


def row_lines(lines: np.ndarray | None, rows: int) -> np.ndarray | None:
    """`lines` when there is one per row; else None, so messages name no line, not a wrong
    one."""
    return lines if lines is not None and len(lines) == rows else None


def resolve_columns(path: Path, available: list[str], wanted: tuple[str, ...],
                    columns: dict | None, optional: tuple[str, ...] = ()) -> dict[str, str]:
    """Role -> the file's column name; one InputError names every missing role."""
    columns = columns or {}
    shown = ", ".join(map(str, available)) or "none"
    out = {}
    missing = []
    for role in wanted + optional:
        if role in columns:
            name = columns[role]
            if name not in available:
                raise InputError(path, f"has no column {name!r} (columns: {shown})")
            out[role] = name
            continue
        found = next((a for a in ALIASES[role] if a in available and a not in out.values()), None)
        if found is None:
            if role not in optional:
                missing.append(role)
            continue
        out[role] = found
    if missing:
        flag = "--qrels-columns" if "relevance" in wanted else "--columns"
        if any(is_number(str(name)) for name in available):  # the header is a data row
            raise InputError(path, f"has no header row: its first line holds data, not column "
                                   f"names ({shown})", hint=_header_hint(path, wanted),
                             fix=Fix(flag, key="columns") if path is None else None)
        roles = _listed(missing, "or")
        names = _listed([repr(DEFAULT_COLUMNS[r]) for r in missing], "and")
        # keep the given roles: a second --columns replaces the first
        spec = ",".join([f"{r}={n}" for r, n in columns.items()]
                        + [f"{r}=NAME" for r in missing])
        raise InputError(path, f"has no {roles} column (columns: {shown})",
                         hint=f"name {'it' if len(missing) == 1 else 'them'} {names} or {{fix}}",
                         fix=Fix(flag, spec, "columns"))
    for name in out.values():
        if available.count(name) > 1:
            raise InputError(path, f"has {available.count(name)} columns named {name!r}",
                             hint="give each column its own name")
    return out


def _listed(items: list[str], last: str) -> str:
    """"a", "a or b", "a, b or c"."""
    return ", ".join(items[:-1]) + f" {last} " + items[-1] if len(items) > 1 else items[0]


def _header_hint(path: Path | None, wanted: tuple[str, ...]) -> str:
    """A command adding the header row, roles in the usual order."""
    names = [DEFAULT_COLUMNS[r] for r in wanted]
    if path is None:
        return f"give the table column names ({', '.join(names)}) or {{fix}}"
    name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    tab = name.lower().endswith(".tsv")
    header = ("\\t" if tab else ",").join(names)
    target = path.with_name(f"with-header{Path(name).suffix or '.tsv'}")
    cat = f"zcat {path}" if path.name.lower().endswith(".gz") else f"cat {path}"
    return (f"if its columns are {', '.join(names)} in this order, add the header, e.g. "
            f"(printf '{header}\\n'; {cat}) > {target}")


def read_table(path: Path, fmt: str) -> tuple[pa.Table, np.ndarray | None]:
    """The file as an Arrow table, and each row's line number (text formats, else None)."""
    if fmt == "parquet":
        import pyarrow.parquet as pq  # heavy: only for Parquet
        # pq.ParquetFile, not pq.read_table: that probes for pandas
        with parquet_errors(path), pq.ParquetFile(path) as parquet:
            table = parquet.read()
            table.column_names  # noqa: B018 - a name that is not UTF-8 fails here
            return table, None
    data = read_bytes(path)
    if fmt == "jsonl":
        table = read_jsonl_table(path, data)
        return table, row_lines(content_lines(data, skip_header=False), table.num_rows)
    delimiter = "\t" if fmt == "tsv" else ","
    # All text: inference would turn the id "007" into 7. Numbers are parsed by role after.
    # An empty field is null, so "q,," marks a query that retrieved nothing.
    names, parse = csv_header(data, delimiter), pacsv.ParseOptions(delimiter=delimiter)
    try:
        table = pacsv.read_csv(io.BytesIO(data), parse_options=parse,
                               convert_options=pacsv.ConvertOptions(
                                   column_types={name: pa.string() for name in names},
                                   strings_can_be_null=True, null_values=[""]))
    except pa.ArrowInvalid as exc:
        raise _csv_error(path, exc, data, parse, names) from None
    try:
        table.column_names
    except UnicodeDecodeError:  # the parser checks values, not the header's names
        decode_utf8(path, data)  # names the line
        raise InputError(path, "has a column name that is not UTF-8 text") from None
    return table, row_lines(content_lines(data, skip_header=True, lone_cr_ends=True),
                            table.num_rows)


def csv_header(data: bytes, delimiter: str) -> list[str]:
    """The column names on the first non-blank line."""
    head = data[: 1 << 16].decode("utf-8-sig", errors="replace")
    # newline="": a lone CR ends a row, as for the parser
    for row in csv.reader(io.StringIO(head, newline=""), delimiter=delimiter):
        if any(cell.strip() for cell in row):
            return row
    return []


def column(table, name: str) -> pa.Array:
    """One column as a single array (Table or RecordBatch)."""
    column = table.column(name)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def column_strings(path: Path, table: pa.Table, name: str, lines) -> pa.Array:
    col = column(table, name)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        if pa.types.is_integer(col.type):
            col = pc.cast(col, pa.string())  # numeric ids such as 301 stay as written
        else:
            raise InputError(path, f"column {name!r} must hold ids (text), not {col.type}")
    _no_nulls(path, col, lines, f"missing {name!r}")
    try:
        col.validate(full=True)  # a Parquet file's text is not checked to be UTF-8
    except pa.ArrowInvalid:
        raise InputError(path, f"column {name!r} holds text that is not UTF-8",
                         hint="write the ids as UTF-8") from None
    return pc.cast(col, pa.string())


def column_numbers(path: Path, table: pa.Table, name: str, lines, what: str) -> np.ndarray:
    col = column(table, name)
    numeric = pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
    text = pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
    if not numeric and len(col) and (table.schema.metadata or {}).get(JSON_ORIGIN):
        # JSON "1" is text: refused, not parsed (one type a column: the first value shows it)
        value = col[0].as_py()
        line = None if lines is None or not len(lines) else int(lines[0])
        if value is None:
            raise InputError(path, f"missing {what}", line=line)
        raise InputError(path, f"{what} {json.dumps(value)[:40]} is {json_kind(value)}, not a "
                               f"number", line=line,
                         hint="write numbers without quotes" if type(value) is str else None)
    if not (numeric or text):
        raise InputError(path, f"column {name!r} must hold numbers, not {col.type}")
    _no_nulls(path, col, lines, f"missing {what}")
    if numeric:
        return arrow.to_numpy(col)
    try:  # blanks around a number are fine
        return cast_floats(pc.utf8_trim_whitespace(col))
    except NotANumber as bad:
        raise _at_row(path, f"{what} {bad.token!r} is not a number", lines, bad.index) from None


def _no_nulls(path: Path, col: pa.Array, lines, reason: str) -> None:
    if col.null_count:
        raise _at_row(path, reason, lines, int(np.flatnonzero(arrow.to_numpy(pc.is_null(col)))[0]))


def _at_row(path: Path, reason: str, lines, i: int) -> InputError:
    """The error at row `i`: its line, or "row N" as the hint when lines are not known."""
    line = None if lines is None or i >= len(lines) else int(lines[i])
    return InputError(path, reason, line=line, hint=None if lines is not None else f"row {i + 1}")


def _csv_error(path: Path, exc: Exception, data: bytes, parse: pacsv.ParseOptions,
               names) -> InputError:
    """Why the parser refused, at the line of the first row with the wrong column count (error
    path: parsed again on one thread, which numbers the rows, as bytes, which no value fails)."""
    text = str(exc).splitlines()[0]
    match = re.search(r"Expected (\d+) columns, got (\d+)", text)
    reason = (f"wrong column count: expected {match.group(1)}, found {match.group(2)} "
              f"({'tab' if parse.delimiter == chr(9) else 'comma'}-separated)" if match
              else f"cannot be parsed ({text})")
    line = None
    try:
        pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(use_threads=False),
                       parse_options=parse, convert_options=pacsv.ConvertOptions(
                           column_types={name: pa.binary() for name in names}))
    except pa.ArrowInvalid as again:
        row = re.search(r"Row #(\d+): Expected \d+ columns", str(again))
        lines = content_lines(data, skip_header=False, lone_cr_ends=True)
        if row and int(row.group(1)) <= len(lines):
            line = int(lines[int(row.group(1)) - 1])
    return InputError(path, reason, line=line)


def parse_columns(spec: str | None) -> dict | None:
    """`query=qid,skill=docno,score=sim` or `qid,docno,sim` -> {role: name}; None if empty."""
    if not spec:
        return None
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if all("=" in p for p in parts):
        out = dict(p.split("=", 1) for p in parts)
        unknown = set(out) - set(DEFAULT_COLUMNS)
        if unknown:
            raise InputError(None, f"--columns: unknown role(s) {', '.join(sorted(unknown))}",
                             hint="roles: query, skill, score, relevance, rank")
        return out
    if len(parts) == 3:
        return {"query": parts[0], "skill": parts[1], "score": parts[2],
                "relevance": parts[2]}
    raise InputError(None, f"--columns {spec!r}: give query=NAME,skill=NAME,score=NAME")


def rows_from_table(table: pa.Table | pa.RecordBatch, *, source: str | None, lines=None,
                    columns: dict | None = None, names: dict | None = None) -> RowBatch:
    """A row with neither skill nor score marks a query that retrieved nothing."""
    path = Path(source) if source else None
    if names is None:
        names = resolve_columns(path, table.column_names, ("query", "skill", "score"), columns,
                                optional=("rank",))
    query_col = column_strings(path, table, names["query"], lines)
    marker = pc.and_(pc.is_null(column(table, names["skill"])),
                     pc.is_null(column(table, names["score"])))
    empty = arrow.to_numpy(marker) if pc.any(marker).as_py() else None
    kept, kept_lines = table, lines
    if empty is not None:
        kept = arrow.filter(table, pc.invert(marker))
        kept_lines = None if lines is None else np.asarray(lines)[~empty]
    skill = column_strings(path, kept, names["skill"], kept_lines)
    score = column_numbers(path, kept, names["score"], kept_lines, "score").astype(np.float64)
    check_finite(score, source=source, lines=kept_lines)
    if empty is not None:  # "" skills and 0 scores on the marker rows
        index = np.full(len(empty), len(skill), dtype=np.int64)
        index[~empty] = np.arange(len(skill))
        skill = arrow.take(pa.concat_arrays([skill, arrow.strings([""])]), index)
        score = np.append(score, 0.0)[index]
    rank = None
    rank_col = column(table, names["rank"]) if "rank" in names else None
    if rank_col is not None and not rank_col.null_count:  # informative only, as in trec_eval
        if pa.types.is_string(rank_col.type) or pa.types.is_large_string(rank_col.type):
            rank = parse_integers(rank_col)  # CSV/TSV columns are read as text
        elif pa.types.is_integer(rank_col.type):
            rank = arrow.to_numpy(rank_col).astype(np.int64)
        elif pa.types.is_floating(rank_col.type):
            rank = arrow.to_numpy(rank_col).astype(np.float64)
    return RowBatch(query_col, skill, score, None if lines is None else np.asarray(lines), rank,
                    empty)


def parquet_batches(path: Path, *, columns: dict | None = None, with_rank: bool = False,
                    batch_rows: int = 1 << 18) -> Iterator[RowBatch]:
    """A Parquet run in row batches."""
    import pyarrow.parquet as pq  # heavy: only for Parquet

    with parquet_errors(path):
        parquet = pq.ParquetFile(path)
        available = parquet.schema_arrow.names
    names = resolve_columns(path, available, ("query", "skill", "score"), columns,
                            optional=("rank",))
    if not with_rank:
        names.pop("rank", None)
    batches = parquet.iter_batches(batch_size=batch_rows, columns=list(names.values()))
    while True:
        with parquet_errors(path):  # a corrupt page shows only when it is read
            batch = next(batches, None)
        if batch is None:
            return
        yield rows_from_table(batch, source=str(path), names=names)


def qrels_from_table(table: pa.Table, *, source: str | None, lines=None,
                     columns: dict | None = None) -> Qrels:
    path = Path(source) if source else None
    names = resolve_columns(path, table.column_names, ("query", "skill", "relevance"),
                            columns)
    query_col = column_strings(path, table, names["query"], lines)
    skill_col = column_strings(path, table, names["skill"], lines)
    grades = column_numbers(path, table, names["relevance"], lines, "grade")
    grades = integral_grades(grades, source=source, lines=lines)
    return Qrels.from_columns(query_col, skill_col, grades, source=source,
                              lines=None if lines is None else np.asarray(lines))


def read_jsonl_table(path: Path, data) -> pa.Table:
    """JSON lines as an Arrow table, marked `JSON_ORIGIN` so that a number role holding
    strings ("1") is refused rather than parsed. InputError names a bad line.
    """
    import pyarrow.json as pajson  # heavy: only for JSON lines

    # a line longer than a block: read again as one block
    for again, block in enumerate((1 << 20, min(len(data) + 1, (1 << 31) - 1))):
        try:
            table = pajson.read_json(pa.BufferReader(data),
                                     read_options=pajson.ReadOptions(block_size=block))
            break
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            arrow_reason = str(exc).splitlines()[0].replace("JSON parse error: ", "")
            if "straddl" not in arrow_reason or again:  # no third read
                _jsonl_error(path, data, arrow_reason)
    try:
        table.validate(full=True)
        table.column_names  # field names are not validated: decoding may fail
    except (pa.ArrowInvalid, UnicodeDecodeError):
        decode_utf8(path, data)  # names the line
        raise not_utf8(path) from None
    return table.replace_schema_metadata({JSON_ORIGIN: b"1"})


def _jsonl_error(path: Path, data, arrow_reason: str):
    """InputError naming the offending line (error path only)."""
    first_kind: dict[str, tuple[str, int]] = {}
    for number, obj in json_objects(path, decode_utf8(path, data)):
        for key, value in obj.items():
            if isinstance(value, float) and math.isinf(value):
                raise InputError(path, f"field {key!r}: number too big to be stored in a "
                                       f"double", line=number)
            kind = JSON_KINDS.get(type(value))
            if kind is None:  # null
                continue
            seen = first_kind.setdefault(key, (kind, number))
            if seen[0] != kind:
                raise InputError(path, f"field {key!r} is a {kind} here but a {seen[0]} on "
                                       f"line {seen[1]}", line=number,
                                 hint="give every line the same fields with the same types")
    raise InputError(path, f"cannot be read as JSON lines ({arrow_reason})",
                     hint="give every line the same fields with the same types")
