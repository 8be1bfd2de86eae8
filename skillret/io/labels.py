"""Labels for ids from SkillRet's JSONL files (query text, skill name)."""

from __future__ import annotations

import json

from skillret.errors import InputError
from skillret.io.json_lines import json_objects

ID_FIELDS = ("id", "query_id", "skill_id", "_id")


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


__all__ = ["read_labels"]
