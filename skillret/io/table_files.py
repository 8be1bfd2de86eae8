"""Row tables: CSV/TSV with a header, JSON lines, Parquet (and .gz of the text ones).

Columns are found by role: the defaults, else a known alias, unless `columns` names them.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from skillret import limits
from skillret.columnar import arrow
from skillret.columnar.convert import NotANumber, cast_floats
from skillret.errors import Fix, InputError
from skillret.io.json_lines import JSON_ORIGIN, decode_utf8, not_a_json_number, read_jsonl_table
from skillret.io.sniff import is_gzip

DEFAULT_COLUMNS = {"query": "query_id", "skill": "skill_id", "score": "score",
                   "relevance": "relevance", "rank": "rank"}
ALIASES = {
    "query": ("query_id", "qid", "query", "topic", "topic_id", "q_id"),
    "skill": ("skill_id", "doc_id", "docid", "docno", "corpus_id", "pid", "skill", "doc"),
    "score": ("score", "sim", "similarity", "relevance_score"),
    "relevance": ("relevance", "grade", "label", "rel", "judgment", "score"),
    "rank": ("rank",),
}


def read_bytes(path: Path) -> bytes:
    """The whole file, gunzipped; InputError beyond the input limit (checked while reading,
    so a gzip bomb costs no more than the limit)."""
    cap = limits.current().input_bytes
    try:
        if not is_gzip(path):
            if path.stat().st_size > cap:
                too_big(path, cap)
            return path.read_bytes()
        data = bytearray()
        with gzip.open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                data += block
                if len(data) > cap:
                    too_big(path, cap)
        return data
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(path, f"cannot be read ({exc})") from None


def unreadable_parquet(path: Path, exc: Exception):
    """Raise InputError for any pyarrow error reading a Parquet file."""
    reason = (str(exc).splitlines() or [type(exc).__name__])[0]
    raise InputError(path, f"is not a readable Parquet file ({reason})")


def too_big(path: Path, cap: int):
    raise InputError(path, f"is larger than {limits.show_size(cap)} once decompressed",
                     hint="raise the limit with --max-input-size, or give the run as TREC or "
                          "Parquet, which are streamed")


def content_lines(data: bytes, skip_header: bool, *, lone_cr_ends: bool = False) -> np.ndarray:
    """1-based numbers of the non-blank lines (after the header if `skip_header`).

    With `lone_cr_ends` (CSV/TSV) a lone `\r` also ends a line, as for pyarrow's parser, so
    there is one number per row. Else a line holding only `\r` is blank."""
    raw = np.frombuffer(data, dtype=np.uint8)
    newline = raw == 10
    if lone_cr_ends:
        cr = raw == 13
        lone = cr.copy()
        lone[:-1] &= ~newline[1:]  # "\r\n" ends at its "\n"
        ends = np.flatnonzero(newline | lone)
        crlf = np.zeros(len(raw), dtype=bool)
        crlf[1:] = newline[1:] & cr[:-1]
    else:
        ends = np.flatnonzero(newline)
    if len(raw) and not len(ends) or len(ends) and ends[-1] != len(raw) - 1:
        ends = np.append(ends, len(raw))  # a last line without its end
    starts = np.concatenate([[0], ends[:-1] + 1]) if len(ends) else np.zeros(0, np.int64)
    lengths = ends - starts
    if lone_cr_ends and len(ends):
        ended_by_crlf = np.zeros(len(ends), dtype=bool)
        inside = ends < len(raw)
        ended_by_crlf[inside] = crlf[ends[inside]]
        lengths = lengths - ended_by_crlf
    blank = lengths == 0
    if len(lengths) and not lone_cr_ends:
        first = raw[np.minimum(starts, max(len(raw) - 1, 0))] if len(raw) else np.zeros(0)
        blank |= (lengths == 1) & (first == 13)
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
        if _looks_like_data(available):
            raise InputError(path, f"has no header row: its first line holds data, not column "
                                   f"names ({shown})", hint=_header_hint(path, wanted),
                             fix=Fix(flag, key="columns") if path is None else None)
        roles = missing[0] if len(missing) == 1 else \
            f"{', '.join(missing[:-1])} or {missing[-1]}"
        defaults = [repr(DEFAULT_COLUMNS[r]) for r in missing]
        names = defaults[0] if len(defaults) == 1 else \
            f"{', '.join(defaults[:-1])} and {defaults[-1]}"
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


def _looks_like_data(names: list[str]) -> bool:
    """A column name is a number: the header is really a data row."""
    for name in names:
        try:
            float(str(name))
            return True
        except ValueError:
            continue
    return False


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
        try:
            with pq.ParquetFile(path) as parquet:  # pq.read_table probes for pandas
                table = parquet.read()
                table.column_names  # noqa: B018 - a name that is not UTF-8 fails here
                return table, None
        except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
            unreadable_parquet(path, exc)
    data = read_bytes(path)
    if fmt == "jsonl":
        table = read_jsonl_table(path, data)
        return table, row_lines(content_lines(data, skip_header=False), table.num_rows)
    delimiter = "\t" if fmt == "tsv" else ","
    # All text: inference would turn the id "007" into 7. Numbers are parsed by role after.
    # An empty field is null, so "q,," marks a query that retrieved nothing.
    text_columns = {name: pa.string() for name in _csv_header(data, delimiter)}
    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=pacsv.ConvertOptions(column_types=text_columns,
                                                 strings_can_be_null=True, null_values=[""]),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(path, _csv_reason(exc, delimiter), line=_csv_line(data, exc)) from None
    try:
        table.column_names
    except UnicodeDecodeError:  # the parser checks values, not the header's names
        decode_utf8(path, data)  # names the line
        raise InputError(path, "has a column name that is not UTF-8 text") from None
    return table, row_lines(content_lines(data, skip_header=True, lone_cr_ends=True),
                            table.num_rows)


def _csv_header(data: bytes, delimiter: str) -> list[str]:
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
    if col.null_count:
        i = int(np.flatnonzero(arrow.to_numpy(pc.is_null(col)))[0])
        raise InputError(path, f"missing {name!r}", line=_line(lines, i),
                         hint=None if lines is not None else f"row {i + 1}")
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
        not_a_json_number(path, col, lines, what)  # JSON "1" is text: refused, not parsed
    if (numeric or text) and col.null_count:
        i = int(np.flatnonzero(arrow.to_numpy(pc.is_null(col)))[0])
        raise InputError(path, f"missing {what}", line=_line(lines, i),
                         hint=None if lines is not None else f"row {i + 1}")
    if numeric:
        return arrow.to_numpy(col)
    if text:
        try:  # blanks around a number are fine
            return cast_floats(pc.utf8_trim_whitespace(col))
        except NotANumber as bad:
            raise InputError(path, f"{what} {bad.token!r} is not a number",
                             line=_line(lines, bad.index),
                             hint=None if lines is not None else f"row {bad.index + 1}") from None
    raise InputError(path, f"column {name!r} must hold numbers, not {col.type}")


def _line(lines, i: int) -> int | None:
    return None if lines is None or i >= len(lines) else int(lines[i])


def _csv_reason(exc: Exception, delimiter: str) -> str:
    text = str(exc).splitlines()[0]
    if "Expected" in text and "columns" in text:
        match = re.search(r"Expected (\d+) columns, got (\d+)", text)
        if match:
            return (f"wrong column count: expected {match.group(1)}, found {match.group(2)}"
                    f" ({'tab' if delimiter == chr(9) else 'comma'}-separated)")
    return f"cannot be parsed ({text})"


def _csv_line(data: bytes, exc: Exception) -> int | None:
    """The line of the first row with the wrong column count (error path)."""
    text = data.decode("utf-8", errors="replace").splitlines()
    if not text:
        return None
    delimiter = "\t" if text[0].count("\t") > text[0].count(",") else ","
    reader = csv.reader(text, delimiter=delimiter)
    width = None
    try:
        for number, row in enumerate(reader, 1):
            if not row:
                continue
            if width is None:
                width = len(row)
            elif len(row) != width:
                return number
    except csv.Error:  # a field over the csv module's 128 KiB limit
        return None
    return None


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
