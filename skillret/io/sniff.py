"""Which format a path holds (extension, then content; `fmt` overrides), and what every reader
shares: the checks (exists, readable, not empty, not binary), the bytes within the input limit,
UTF-8 decoding naming the bad line, JSON objects one a line.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path

from skillret import limits
from skillret.errors import SHOWN_AS, InputError

RUN_FORMATS = ("trec", "skillret-json", "json", "jsonl", "csv", "tsv", "parquet")
QRELS_FORMATS = ("trec", "jsonl", "queries-jsonl", "json", "csv", "tsv", "parquet",
                 "skillret-dir")

_EXT = {
    ".trec": "trec", ".run": "trec", ".txt": "trec", ".qrels": "trec", ".res": "trec",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet",
}
_SNIFF_BYTES = 64 * 1024
GZIP, PARQUET = b"\x1f\x8b", b"PAR1"


def starts_with(path: Path, magic: bytes) -> bool:
    with open(path, "rb") as fh:
        return fh.read(len(magic)) == magic


def read_bytes(path: Path, head: int | None = None) -> bytes:
    """The whole file gunzipped, or its first `head` bytes; InputError beyond the input limit
    (checked while reading, so a gzip bomb costs no more than the limit)."""
    cap = limits.current().input_bytes
    try:
        gzipped = starts_with(path, GZIP)
        if head is None and not gzipped and path.stat().st_size > cap:
            raise too_big(path, cap)
        with gzip.open(path, "rb") if gzipped else open(path, "rb") as fh:
            if head is not None or not gzipped:
                return fh.read(head)
            data = bytearray()
            while block := fh.read(1 << 20):
                data += block
                if len(data) > cap:
                    raise too_big(path, cap)
            return data
    except (OSError, EOFError, zlib.error) as exc:
        raise unreadable(path, exc) from None


def unreadable(path, exc: Exception, where: str = "") -> InputError:
    reason = getattr(exc, "strerror", None) or str(exc).split("\n")[0] or type(exc).__name__
    return InputError(path, f"cannot be read ({reason}{where})")


def too_big(path: Path, cap: int) -> InputError:
    return InputError(path, f"is larger than {limits.show_size(cap)} once decompressed",
                      hint="raise the limit with --max-input-size, or give the run as TREC or "
                           "Parquet, which are streamed")


def decode_utf8(path: Path, data) -> str:
    """`data` decoded (BOM dropped); InputError naming the line of invalid UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise not_utf8(path, data.count(b"\n", 0, exc.start) + 1) from None


def not_utf8(path, line: int | None = None) -> InputError:
    return InputError(path, "is not UTF-8 text", line=line, hint="save the file as UTF-8")


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


JSON_KINDS = {bool: "boolean", int: "number", float: "number", str: "string", list: "list",
               dict: "object"}


def json_kind(value) -> str:
    """"a boolean", "a string", "an object", "null"... (else the type's name)."""
    kind = JSON_KINDS.get(type(value))
    if kind is None:
        return "null" if value is None else type(value).__name__
    return f"an {kind}" if kind == "object" else f"a {kind}"


def check_file(path: str | os.PathLike) -> Path:
    """The path of a readable, non-empty file, or of a directory; else InputError."""
    p = Path(path)
    if not p.exists():
        raise InputError(p, "no such file", hint="check the path")
    if p.is_dir():
        return p
    if not os.access(p, os.R_OK):
        raise InputError(p, "permission denied")
    if p.stat().st_size == 0:
        raise InputError(p, "file is empty")
    return p


def detect(path: str | os.PathLike, *, kind: str, fmt: str | None = None) -> str:
    """The format name of `path` for `kind` ("run" or "qrels")."""
    p = check_file(path)
    allowed = RUN_FORMATS if kind == "run" else QRELS_FORMATS
    if fmt:
        fmt = fmt.lower()
        if fmt not in allowed:
            raise InputError(p, f"unknown {kind} format {fmt!r}",
                             hint=f"one of {', '.join(allowed)}")
        return fmt
    if p.is_dir():
        if kind == "qrels":
            return "skillret-dir"
        raise InputError(p, "is a directory, not a run file")
    if starts_with(p, PARQUET):
        return "parquet"
    head = read_bytes(p, _SNIFF_BYTES)
    if not head.strip():
        raise InputError(p, "file is empty (only whitespace)")
    if b"\x00" in head:
        raise InputError(p, "is a binary file, not text",
                         hint="runs and qrels are TREC text, JSON, JSONL, CSV/TSV, Parquet or .gz")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut by the sniff window
            raise not_utf8(p, head[: exc.start].count(b"\n") + 1) from None
    name = Path(SHOWN_AS.get(str(p), str(p))).name  # a stream's copy: the name given
    ext = Path(name[:-3] if name.lower().endswith(".gz") else name).suffix.lower()
    guess = _EXT.get(ext)
    if guess == "parquet":
        raise InputError(p, "has a Parquet extension but is not a Parquet file")
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    if guess in ("json", "jsonl") or (guess is None and text.lstrip().startswith(("{", "["))):
        # JSON lines: by the extension, several lines, or a first object that is a flat row
        obj = first_object(text)
        if guess == "jsonl" or (obj is not None and ("\n" in text.strip()
                                                     or _looks_like_row(obj))):
            return "queries-jsonl" if kind == "qrels" and is_queries(obj) else "jsonl"
        return "json"
    if guess is not None:
        return guess
    # No extension: CSV or TSV when the first line is not TREC-shaped (4 fields ending in a
    # grade, or 6+ with a score).
    first = next((ln for ln in text.split("\n") if ln.strip() and not ln.startswith("#")), "")
    if "\t" in first:
        fields = first.rstrip("\r").split("\t")
        trec = (len(fields) == 4 and is_number(fields[3])) or \
            (len(fields) >= 6 and is_number(fields[4]))
        return "trec" if trec else "tsv"
    return "csv" if "," in first and len(first.split()) < 4 else "trec"


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def first_object(text: str) -> dict | None:
    """The first line's JSON object (None if it holds none or bad JSON: the reader says why)."""
    try:
        obj = json.loads(text.lstrip().split("\n", 1)[0].strip())
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def is_queries(obj) -> bool:
    """A line of SkillRet's queries JSONL: judgments in `labels` or `skill_ids`."""
    return isinstance(obj, dict) and ("labels" in obj or "skill_ids" in obj)


def _looks_like_row(obj: dict) -> bool:
    return bool(obj) and all(not isinstance(v, (dict, list)) for v in obj.values())


#: Column names telling a run from qrels.
_RUN_COLUMNS = {"score", "sim", "similarity", "relevance_score", "rank"}
_QRELS_COLUMNS = {"relevance", "grade", "label", "rel", "judgment", "labels", "skill_ids"}


def looks_like(path: str | os.PathLike) -> str | None:
    """"run" or "qrels" when the file's head says which, else None. Never raises (hints
    only)."""
    try:
        p = Path(path)
        if p.is_dir():
            return "qrels"  # a SkillRet data directory
        if starts_with(p, PARQUET):
            import pyarrow.parquet as pq  # heavy: only for Parquet
            return _by_columns(pq.read_schema(p).names)
        text = read_bytes(p, 1 << 14).decode("utf-8", errors="replace").lstrip("\ufeff")
    except Exception:  # noqa: BLE001 - a hint only
        return None
    stripped = text.lstrip()
    if stripped.startswith("{"):
        row = first_object(stripped)
        if row is not None and _looks_like_row(row):
            return _by_columns(list(row))
        if is_queries(row):
            return "qrels"
        head = stripped[:4096]
        return "run" if '"retrieval"' in head or '"metrics"' in head else None
    first = next((ln for ln in text.split("\n") if ln.strip() and not ln.startswith("#")), "")
    for delimiter in ("\t", ","):
        names = [c.strip().strip('"') for c in first.split(delimiter)]
        by_name = _by_columns(names) if len(names) > 2 else None
        if by_name:
            return by_name
    fields = len(first.split())
    return "run" if fields >= 6 else "qrels" if fields == 4 else None


def _by_columns(names: list[str]) -> str | None:
    lowered = {str(n).lower() for n in names}
    if lowered & _QRELS_COLUMNS and not lowered & (_RUN_COLUMNS - {"score"}):
        return "qrels"
    if lowered & _RUN_COLUMNS:
        return "run"
    return None
