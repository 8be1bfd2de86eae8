"""Caps that keep a hostile or broken input from filling memory: the decompressed size of what
is read whole (JSON, JSON lines, CSV/TSV), a JSON document's nesting, and the results per query
of a streamed run (TREC, Parquet). In code: `with skillret.limits.applied(input_bytes=8 << 30):`.
"""

from __future__ import annotations

import contextlib
import re
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Iterator

#: Largest whole-read input (JSON, JSON lines, CSV/TSV), in bytes once decompressed.
MAX_INPUT_BYTES = 1 << 30
#: Deepest nesting of a JSON document (SkillRet's results JSON nests four levels).
MAX_JSON_DEPTH = 64
#: Results one query may hold (SkillRet has 6,006 skills; TREC runs hold 1,000 per query).
MAX_RESULTS_PER_QUERY = 100_000


@dataclass(frozen=True)
class Limits:
    input_bytes: int = MAX_INPUT_BYTES
    json_depth: int = MAX_JSON_DEPTH
    results_per_query: int = MAX_RESULTS_PER_QUERY


_current: ContextVar[Limits] = ContextVar("skillret_limits", default=Limits())


def current() -> Limits:
    """The limits in force."""
    return _current.get()


@contextlib.contextmanager
def applied(**changes: int | None) -> Iterator[Limits]:
    """Change some limits inside the `with` block (None keeps the current value)."""
    limits = replace(current(), **{k: v for k, v in changes.items() if v is not None})
    token = _current.set(limits)
    try:
        yield limits
    finally:
        _current.reset(token)


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """`512M`, `8G`, `1048576` (binary units; a trailing `B`/`iB` is allowed)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"not a size: {text!r} (e.g. 512M, 8G)")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def show_size(n: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit] and n % _UNITS[unit] == 0:
            return f"{n // _UNITS[unit]}{unit}"
    return str(n)
