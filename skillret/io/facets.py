"""Files keyed by id: facets and skills (JSONL or JSON array, CSV, TSV, Parquet), and labels
(query text, skill name) from SkillRet's JSONL files."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv

from skillret.errors import InputError
from skillret.io.sniff import decode_utf8, json_error_reason, json_kind, json_objects
from skillret.io.streams import readable
from skillret.io.table_files import content_lines, csv_header, read_errors, row_lines

QUERY_ID_COLUMNS = ("query_id", "qid", "id", "_id")
SKILL_ID_COLUMNS = ("skill_id", "id", "_id", "doc_id", "docid")
ID_FIELDS = ("id", "query_id", "skill_id", "_id")
_TEXT_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv",
                  ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}


@dataclass
class KeyedTable:
    """Rows keyed by id; `values`: a column's values, one a row; `nested`: the columns of
    lists or objects a table's schema shows; `lines`: 1-based line numbers (text formats)."""

    path: str
    key: str
    ids: list[str]
    columns: list[str]
    values: Callable[[str], list]
    nested: frozenset = frozenset()
    lines: list[int] | None = None
    _index: dict[str, int] = field(default_factory=dict)

    def line(self, row: int) -> int | None:
        return None if self.lines is None else self.lines[row]

    def __contains__(self, key: str) -> bool:
        return key in self._index


def read_keyed(path: str | os.PathLike, id_columns: Sequence[str], what: str) -> KeyedTable:
    """A facets or skills file keyed by the first of `id_columns` it has (ids as text).
    InputError for no key column or a repeated id."""
    typed, path = os.fspath(path), os.fspath(readable(path))
    kind = _TEXT_SUFFIXES.get(Path(typed).suffix.lower())
    if kind is None and path != typed:  # a stream: by its first bytes
        kind = _kind_by_content(path)
    if kind is None:
        raise InputError(path, f"cannot tell the format of this {what} file from its extension",
                         hint="use .jsonl, .csv, .tsv or .parquet")
    if not os.path.isfile(path):
        raise InputError(path, f"no such {what} file")
    if kind == "jsonl":
        table = _read_json_rows(path, id_columns, what)
    else:
        table = _read_arrow(path, kind, id_columns, what)
    seen: dict[str, int] = {}
    for row, qid in enumerate(table.ids):
        if qid in seen:
            first = table.line(seen[qid])
            where = f" (first on line {first})" if first is not None else ""
            raise InputError(path, f"id {qid!r} appears twice{where}", line=table.line(row))
        seen[qid] = row
    table._index = seen
    return table


def _kind_by_content(path: str) -> str:
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.lstrip().startswith((b"{", b"[")):
        return "jsonl"
    return "tsv" if b"\t" in head.split(b"\n", 1)[0] else "csv"


def _key_column(path: str, columns: Iterable[str], id_columns: Sequence[str], what: str) -> str:
    columns = list(columns)
    for name in id_columns:
        if name in columns:
            return name
    raise InputError(path, f"no id column in this {what} file (looked for "
                           f"{', '.join(id_columns)}; found {', '.join(columns) or 'none'})")


def _read_json_rows(path: str, id_columns: Sequence[str], what: str) -> KeyedTable:
    with open(path, "rb") as fh:
        text = decode_utf8(path, fh.read())
    lines = None
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except ValueError as exc:
            raise InputError(path, f"not valid JSON ({json_error_reason(exc)})",
                             line=getattr(exc, "lineno", None)) from None
        except RecursionError:
            raise InputError(path, "JSON nested too deeply") from None
        if not all(isinstance(item, dict) for item in rows):
            raise InputError(path, "expected an array of objects")
    else:
        numbered = list(json_objects(path, text, "not valid JSON",
                                     "expected one JSON object per line"))
        lines = [number for number, _ in numbered]
        rows = [item for _, item in numbered]
    if not rows:
        raise InputError(path, f"the {what} file has no rows")
    columns = list(dict.fromkeys(name for row in rows for name in row))
    key = _key_column(path, columns, id_columns, what)
    ids = []
    for i, row in enumerate(rows):
        value = row.get(key)
        if value is None or isinstance(value, (list, dict, bool)) or value == "":
            raise InputError(path, f"a row without a usable {key!r}",
                             line=None if lines is None else lines[i])
        ids.append(str(value))
    return KeyedTable(path, key, ids, columns, lambda name: [row.get(name) for row in rows],
                      lines=lines)


def _read_arrow(path: str, kind: str, id_columns: Sequence[str], what: str) -> KeyedTable:
    with read_errors(path, f"cannot read this {what} file"):
        if kind == "parquet":
            import pyarrow.parquet as pq  # heavy: only for Parquet
            with pq.ParquetFile(path) as parquet:  # pq.read_table probes for pandas
                table = parquet.read()
        else:
            delimiter = "\t" if kind == "tsv" else ","
            with open(path, "rb") as fh:
                data = fh.read()
            key = _key_column(path, csv_header(data, delimiter), id_columns, what)
            table = pacsv.read_csv(pa.BufferReader(data),
                                   parse_options=pacsv.ParseOptions(delimiter=delimiter),
                                   convert_options=pacsv.ConvertOptions(
                                       column_types={key: pa.string()}, strings_can_be_null=True))
        names = table.schema.names  # a name that is not UTF-8 fails here
    if table.num_rows == 0:
        raise InputError(path, f"the {what} file has no rows")
    key = _key_column(path, names, id_columns, what)
    if names.count(key) > 1:
        raise InputError(path, f"has {names.count(key)} columns named {key!r}",
                         hint="give each column its own name")
    ids_col = table.column(key)
    if ids_col.null_count:
        raise InputError(path, f"a row without a usable {key!r}")
    ids = [str(v) for v in ids_col.to_pylist()]
    lines = None
    if kind != "parquet":  # line numbers only when each non-blank line holds one row
        lines = row_lines(content_lines(data, True, lone_cr_ends=True), table.num_rows)
    return KeyedTable(path, key, ids, list(table.schema.names),
                      lambda name: table.column(name).to_pylist(),
                      frozenset(f.name for f in table.schema if pa.types.is_nested(f.type)),
                      None if lines is None else lines.tolist())


def check_scalar(table: KeyedTable, name: str, what: str) -> None:
    """InputError for a column holding lists or objects."""
    if name in table.nested:
        raise InputError(table.path, f"{what} {name!r} holds lists or objects, not single "
                                     f"values (only skill_category gives a query several values)")
    for row, value in enumerate(table.values(name)):
        if isinstance(value, (list, dict)):
            raise InputError(table.path, f"{what} {name!r} holds {json_kind(value)}, not a single "
                                         f"value (only skill_category gives a query several "
                                         f"values)", line=table.line(row))


def read_labels(data: bytes, source: str, field: str, wanted) -> dict[str, str]:
    """`{id: record[field]}` for records whose id (any of `ID_FIELDS`) is in `wanted`;
    InputError for a line that is not a JSON object."""
    wanted = set(wanted)
    out: dict[str, str] = {}
    if not wanted:
        return out
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(source, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    for _, record in json_objects(source, text, "not a JSON line", "not a JSON object"):
        key = next((record[f] for f in ID_FIELDS if f in record), None)
        if key is not None and str(key) in wanted and field in record:
            value = record[field]
            out[str(key)] = value if isinstance(value, str) else json.dumps(value)
            if len(out) == len(wanted):
                break
    return out
