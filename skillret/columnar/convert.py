"""In-memory inputs to columns. Flattening iterates in C (`chain`, `np.fromiter`), and keeps
dict order: the order the official evaluator adds queries in.
"""

from __future__ import annotations

import contextlib
from itertools import chain

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.errors import InputError


def flatten_nested(nested, *, what: str, integral: bool = False, source: str | None = None):
    """`{query: {skill: value}}` -> (query id per row, skill ids, values[, queries]).

    Runs get the fourth item, every query (empty rankings included) in dict order; with
    `integral` (qrels) there is none and values must be integral grades.
    """
    if not isinstance(nested, dict):
        raise InputError(source, f"{what} must be a mapping {{query_id: {{skill_id: value}}}}, "
                                 f"not {type(nested).__name__}")
    inner = list(nested.values())
    for query, docs in zip(nested, inner):
        if not isinstance(docs, dict):
            raise InputError(source, f"{what} of query {query!r} must be a mapping "
                                     f"{{skill_id: value}}, not {type(docs).__name__}")
    lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    total = int(lengths.sum())
    queries = _strings(list(nested), what=f"{what} query ids", source=source)
    skills = _strings(list(chain.from_iterable(inner)), what=f"{what} skill ids", source=source)
    if bool in set(map(type, chain.from_iterable(d.values() for d in inner))):
        raise InputError(source, f"{what} holds a boolean where a number belongs",
                         hint="scores are finite numbers, grades integers")
    try:
        values = np.fromiter(chain.from_iterable(d.values() for d in inner), dtype=np.float64,
                             count=total)
    except (TypeError, ValueError) as exc:
        raise InputError(source, f"{what} holds a value that is not a number ({exc})") from None
    except OverflowError:
        raise InputError(source, f"{what} holds a number too large to be stored in a double",
                         hint="scores are finite numbers, grades integers") from None
    row_query = arrow.take(queries, np.repeat(np.arange(len(inner)), lengths))
    if integral:
        values = integral_grades(values, source=source)
        return row_query, skills, values
    check_finite(values, source=source)
    return row_query, skills, values, queries


def _strings(values: list, *, what: str, source: str | None) -> pa.Array:
    try:
        return arrow.strings(values)
    except TypeError:
        bad = next((v for v in values if not isinstance(v, str)), None)
        raise InputError(source, f"{what} must be strings, got {type(bad).__name__} {bad!r}",
                         hint="pytrec_eval requires string ids too") from None


class NotANumber(ValueError):
    """Raised by `cast_floats`: `index` is the first token that is not a number."""

    def __init__(self, index: int, token):
        super().__init__(f"token {index} ({token!r}) is not a number")
        self.index, self.token = index, token


def cast_floats(tokens: pa.Array) -> np.ndarray:
    """float64 of text tokens; `NotANumber` names the first that is not a number."""
    with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return arrow.to_numpy(pc.cast(tokens, pa.float64()))
    for i, token in enumerate(tokens.to_pylist()):
        try:
            pc.cast(arrow.strings([token]), pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise NotANumber(i, token) from None
    raise AssertionError("unreachable")  # pragma: no cover


def parse_integers(tokens: pa.Array) -> np.ndarray | None:
    """int64; float64 when some token is a non-integer number (validation then reports swapped
    columns); None when some token is not a number (ranks are informative only)."""
    for kind in (pa.int64(), pa.float64()):
        with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return arrow.to_numpy(pc.cast(tokens, kind))
    return None


#: C `int`'s range: trec_eval and pytrec_eval store grades in C integers.
GRADE_MIN, GRADE_MAX = -(2 ** 31), 2 ** 31 - 1


def valid_grades(values: np.ndarray) -> np.ndarray:
    """Per value: an integer (`1.0` is one) within [GRADE_MIN, GRADE_MAX]."""
    values = np.asarray(values)
    if values.dtype.kind not in "iuf":
        return np.zeros(len(values), dtype=bool)
    with np.errstate(invalid="ignore"):
        return (values == np.floor(values)) & (values >= GRADE_MIN) & (values <= GRADE_MAX)


def integral_grades(values: np.ndarray, *, source: str | None = None, lines=None) -> np.ndarray:
    """Grades as int64; `1.0` is fine; `1.5`, NaN, inf, `1e30` and booleans are refused."""
    values = np.asarray(values)
    if values.dtype.kind == "b":
        raise InputError(source, "grades must be integers, not booleans",
                         line=None if lines is None or not len(lines) else int(lines[0]),
                         hint="grades are integers such as 0, 1, 2")
    good = valid_grades(values)
    if not good.all():
        i = int(np.flatnonzero(~good)[0])
        value = values[i]
        integral = values.dtype.kind in "iu" or (np.isfinite(value) and value == np.floor(value))
        shown = str(int(value)) if integral and abs(value) < 1e15 else repr(float(value))
        raise InputError(source, f"grade {shown} is " + (
            f"out of range ({GRADE_MIN:,} to {GRADE_MAX:,})" if integral else "not an integer"),
            line=None if lines is None else int(lines[i]),
            hint="grades are integers such as 0, 1, 2")
    return values.astype(np.int64)


def check_finite(scores: np.ndarray, *, source: str | None = None, lines=None,
                 texts=None) -> None:
    """InputError naming the first NaN or infinite score."""
    bad = ~np.isfinite(scores)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        shown = texts[i] if texts is not None else repr(float(scores[i]))
        raise InputError(source, f"score {shown!r} is not a finite number",
                         line=None if lines is None else int(lines[i]),
                         hint="every result needs a finite numeric score")
