"""JSON lines as a table, and JSON helpers: UTF-8 decoding naming the bad line, objects one a
line, and value kinds as messages name them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa

from skillret.errors import InputError

#: Schema metadata key of tables read from JSON lines.
JSON_ORIGIN = b"skillret.json"


def decode_utf8(path: Path, data) -> str:
    """`data` decoded (BOM dropped); InputError naming the line of invalid UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, "is not UTF-8 text", line=data.count(b"\n", 0, exc.start) + 1,
                         hint="save the file as UTF-8") from None


def json_objects(path, text: str, malformed: str = "malformed JSON",
                 not_object: str = "each line must be a JSON object, not {}"):
    """(line number, object) per non-blank line; InputError naming a line that is not one
    (`not_object` is formatted with the value's type)."""
    for number, line in enumerate(text.split("\n"), 1):  # splitlines breaks at U+2028
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:  # JSONDecodeError, or an integer of over 4,300 digits
            raise InputError(path, f"{malformed} ({json_error_reason(exc)})",
                             line=number) from None
        except RecursionError:
            raise InputError(path, "JSON nested too deeply", line=number) from None
        if not isinstance(obj, dict):
            raise InputError(path, not_object.format(type(obj).__name__), line=number)
        yield number, obj


def json_error_reason(exc: ValueError) -> str:
    """Why `json.loads` refused (also for an over-long integer, a plain ValueError)."""
    return getattr(exc, "msg", None) or str(exc).split(":")[0]


def json_kind(value) -> str:
    """"a boolean", "a string", "null"..."""
    return {bool: "a boolean", str: "a string", type(None): "null", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def read_jsonl_table(path: Path, data) -> pa.Table:
    """JSON lines as an Arrow table, marked `JSON_ORIGIN` so that a number role holding
    strings ("1") is refused rather than parsed. InputError names a bad line.
    """
    import pyarrow.json as pajson  # heavy: only for JSON lines

    block = 1 << 20
    while True:
        try:
            table = pajson.read_json(pa.BufferReader(data),
                                     read_options=pajson.ReadOptions(block_size=block))
            break
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            arrow_reason = str(exc).splitlines()[0].replace("JSON parse error: ", "")
            if "straddl" in arrow_reason and block < len(data):  # a line longer than a block
                block = min(max(block * 16, len(data) + 1), (1 << 31) - 1)
                continue
            _jsonl_error(path, data, arrow_reason)
    try:
        table.validate(full=True)
        table.column_names  # field names are not validated: decoding may fail
    except (pa.ArrowInvalid, UnicodeDecodeError):
        decode_utf8(path, data)  # names the line
        raise InputError(path, "is not UTF-8 text", hint="save the file as UTF-8") from None
    return table.replace_schema_metadata({JSON_ORIGIN: b"1"})


def not_a_json_number(path: Path, col, lines, what: str):
    """InputError for a JSON column of non-numbers (one type per column: the first value
    shows it)."""
    value = col[0].as_py()
    line = None if lines is None or not len(lines) else int(lines[0])
    if value is None:
        raise InputError(path, f"missing {what}", line=line)
    raise InputError(path, f"{what} {json.dumps(value)[:40]} is {json_kind(value)}, not a number",
                     line=line,
                     hint="write numbers without quotes" if type(value) is str else None)


def _jsonl_error(path: Path, data, arrow_reason: str):
    """InputError naming the offending line (error path only)."""
    first_kind: dict[str, tuple[str, int]] = {}
    for number, obj in json_objects(path, decode_utf8(path, data)):
        for key, value in obj.items():
            if isinstance(value, float) and math.isinf(value):
                raise InputError(path, f"field {key!r}: number too big to be stored in a "
                                       f"double", line=number)
            kind = _json_type(value)
            if kind is None:
                continue
            seen = first_kind.setdefault(key, (kind, number))
            if seen[0] != kind:
                raise InputError(path, f"field {key!r} is a {kind} here but a {seen[0]} on "
                                       f"line {seen[1]}", line=number,
                                 hint="give every line the same fields with the same types")
    raise InputError(path, f"cannot be read as JSON lines ({arrow_reason})",
                     hint="give every line the same fields with the same types")


def _json_type(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "list" if isinstance(value, list) else "object"
