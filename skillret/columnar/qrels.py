"""Judgments in columnar form: (query_id, skill_id, relevance), sorted, unique.

Negative grades are kept: their query counts as judged, but they are never relevant nor a gain.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.convert import flatten_nested
from skillret.errors import InputError
from skillret.columnar.strings import as_string_array, repeated_rows, starts


@dataclass(frozen=True)
class Qrels:
    """Immutable judgments; build with `from_columns` (validates) or the readers.
    `offsets`: where each of `queries` starts, then the end."""

    query_id: pa.Array            # string, sorted by (query_id, skill_id)
    skill_id: pa.Array            # string
    relevance: np.ndarray         # int64
    source: str | None = None
    duplicates: int = 0           # identical (query, skill, grade) rows dropped on reading
    queries: pa.Array = field(init=False, repr=False)
    offsets: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        first = np.flatnonzero(starts(self.query_id))
        self.relevance.flags.writeable = False
        object.__setattr__(self, "queries", arrow.take(self.query_id, first))
        object.__setattr__(self, "offsets", np.append(first, len(self.relevance)).astype(np.int64))

    @classmethod
    def from_columns(cls, query_id, skill_id, relevance, *, source: str | None = None,
                     lines: np.ndarray | None = None) -> "Qrels":
        """Sort and drop exact duplicates; InputError for a pair judged with two grades."""
        query_id = as_string_array(query_id)
        skill_id = as_string_array(skill_id)
        relevance = np.asarray(relevance, dtype=np.int64)
        n = len(relevance)
        if not (len(query_id) == len(skill_id) == n):
            raise ValueError("query_id, skill_id and relevance differ in length")
        if n and (query_id.null_count or skill_id.null_count):
            bad = int(np.flatnonzero(arrow.to_numpy(pc.or_(pc.is_null(query_id),
                                                           pc.is_null(skill_id))))[0])
            raise InputError(source, "missing query or skill id",
                             line=None if lines is None else int(lines[bad]))
        sort = pc.sort_indices(pa.table({"q": query_id, "s": skill_id}),
                               [("q", "ascending"), ("s", "ascending")])  # a stable sort
        q, s, order = pc.take(query_id, sort), pc.take(skill_id, sort), arrow.to_numpy(sort)
        r = relevance[order]
        earlier, later = repeated_rows(np.cumsum(starts(q)) - 1, s)
        duplicates = len(later)
        if duplicates:
            conflict = r[earlier] != r[later]
            if conflict.any():
                j = int(np.flatnonzero(conflict)[0])
                i = int(later[j])
                first, second = sorted((int(order[earlier[j]]), int(order[i])))
                where = None if lines is None else int(lines[second])
                also = "" if lines is None else f" (first at line {int(lines[first])})"
                raise InputError(
                    source,
                    f"query {q[i].as_py()!r} judges skill {s[i].as_py()!r} twice with "
                    f"different grades{also}",
                    line=where, hint="keep one judgment per (query, skill)")
            keep = np.ones(n, dtype=bool)
            keep[later] = False
            q, s, r = arrow.filter(q, keep), arrow.filter(s, keep), r[keep]
        return cls(q, s, r, source=source, duplicates=duplicates)

    @classmethod
    def from_dict(cls, qrels: dict, *, source: str | None = None) -> "Qrels":
        """From `{query_id: {skill_id: grade}}`."""
        qid, sid, grade = flatten_nested(qrels, what="qrels", integral=True)
        return cls.from_columns(qid, sid, grade, source=source)

    def __len__(self) -> int:
        return len(self.relevance)

    def row_query(self) -> np.ndarray:
        """Position of each judgment's query in `queries`."""
        return np.repeat(np.arange(len(self.queries), dtype=np.int64), np.diff(self.offsets))

    def relevant_counts(self, level: int) -> np.ndarray:
        """int64 per judged query: judgments with grade >= level."""
        hits = self.row_query()[self.relevance >= level]
        return np.bincount(hits, minlength=len(self.queries)).astype(np.int64)

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, s, r in zip(self.query_id.to_pylist(), self.skill_id.to_pylist(),
                           self.relevance.tolist()):
            out.setdefault(q, {})[s] = r
        return out

    def stats(self) -> dict:
        """Summary counts: queries, pairs, grades, skills per query."""
        grades, counts = np.unique(self.relevance, return_counts=True)
        per_query = np.diff(self.offsets)
        required = self.relevant_counts(1)
        hist = np.bincount(required)
        return {
            "queries": int(len(self.queries)),
            "pairs": int(len(self)),
            "skills": int(pc.count_distinct(self.skill_id).as_py()) if len(self) else 0,
            "grades": {str(int(g)): int(c) for g, c in zip(grades, counts)},
            "judgments_per_query": _summary(per_query),
            "required_skills_per_query": {
                **_summary(required),
                "histogram": {str(i): int(c) for i, c in enumerate(hist) if c},
            },
            "queries_without_relevant": int((required == 0).sum()),
            "duplicate_rows_dropped": int(self.duplicates),
        }


def _summary(values: np.ndarray) -> dict:
    if len(values) == 0:
        return {"min": 0, "median": 0, "max": 0, "mean": 0.0}
    return {"min": int(values.min()), "median": float(np.median(values)),
            "max": int(values.max()), "mean": round(float(values.mean()), 5)}
