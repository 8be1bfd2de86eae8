"""Judgments (qrels) in canonical columnar form: (query_id, skill_id, relevance), sorted, unique.

Ids are strings exactly as written. Grades are integers; negative grades are kept (they are
judged, so their query counts as judged, but never relevant and never a gain).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import arrow
from .errors import InputError
from .strings import EqualLengthIds, SortedStrings, fixed_width

#: Grade of a retrieved skill that is not judged, and of the padding beyond the last result.
UNJUDGED = np.iinfo(np.int64).min
#: :meth:`Qrels.lookup_prints` compares each result with every judgment of its query while that
#: makes at most this many comparisons per result; beyond, a hash lookup is cheaper.
PRINT_LOOKUP_FANOUT = 4


def _as_string_array(values) -> pa.Array:
    array = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_large_string(array.type):
        array = pc.cast(array, pa.string())
    if not pa.types.is_string(array.type):
        array = pc.cast(array, pa.string())
    return array


@dataclass
class Qrels:
    """Canonical judgments. Build with :meth:`from_columns` (validates) or the readers."""

    query_id: pa.Array            # string, sorted by (query_id, skill_id)
    skill_id: pa.Array            # string
    relevance: np.ndarray         # int64
    source: str | None = None
    duplicates: int = 0           # identical (query, skill, grade) rows dropped on reading
    _cache: dict = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_columns(cls, query_id, skill_id, relevance, *, source: str | None = None,
                     lines: np.ndarray | None = None) -> "Qrels":
        """Sort, drop exact duplicates, refuse a pair judged twice with different grades."""
        query_id = _as_string_array(query_id)
        skill_id = _as_string_array(skill_id)
        relevance = np.asarray(relevance, dtype=np.int64)
        n = len(relevance)
        if not (len(query_id) == len(skill_id) == n):
            raise ValueError("query_id, skill_id and relevance differ in length")
        if n and (query_id.null_count or skill_id.null_count):
            bad = int(np.flatnonzero(pc.or_(pc.is_null(query_id), pc.is_null(skill_id))
                                     .to_numpy(zero_copy_only=False))[0])
            raise InputError(source, "missing query or skill id",
                             line=None if lines is None else int(lines[bad]))
        table = pa.table({"q": query_id, "s": skill_id, "r": relevance,
                          "i": np.arange(n, dtype=np.int64)})
        table = arrow.take(table, pc.sort_indices(
            table, [("q", "ascending"), ("s", "ascending"), ("i", "ascending")]))
        q = table.column("q").combine_chunks()
        s = table.column("s").combine_chunks()
        r = table.column("r").to_numpy()
        order = table.column("i").to_numpy()
        duplicates = 0
        if n > 1:
            same = pc.and_(pc.equal(q[1:], q[:-1]), pc.equal(s[1:], s[:-1]))
            same = same.to_numpy(zero_copy_only=False)
            if same.any():
                conflict = same & (r[1:] != r[:-1])
                if conflict.any():
                    i = int(np.flatnonzero(conflict)[0]) + 1
                    first, second = sorted((int(order[i - 1]), int(order[i])))
                    where = None if lines is None else int(lines[second])
                    also = "" if lines is None else f" (first at line {int(lines[first])})"
                    raise InputError(
                        source,
                        f"query {q[i].as_py()!r} judges skill {s[i].as_py()!r} twice with "
                        f"different grades{also}",
                        line=where, hint="keep one judgment per (query, skill)")
                keep = np.ones(n, dtype=bool)
                keep[1:] = ~same
                duplicates = int(n - keep.sum())
                q, s, r = arrow.filter(q, keep), arrow.filter(s, keep), r[keep]
        return cls(q, s, r, source=source, duplicates=duplicates)

    @classmethod
    def from_dict(cls, qrels: dict, *, source: str | None = None) -> "Qrels":
        """From pytrec_eval's ``{query_id: {skill_id: grade}}``."""
        from .convert import flatten_nested
        qid, sid, grade = flatten_nested(qrels, what="qrels", integral=True)
        return cls.from_columns(qid, sid, grade, source=source)

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return len(self.relevance)

    @property
    def queries(self) -> pa.Array:
        """Judged query ids (at least one judgment of any grade), sorted."""
        self._index()
        return self._cache["queries"]

    @property
    def offsets(self) -> np.ndarray:
        self._index()
        return self._cache["offsets"]

    def _index(self) -> None:
        if "queries" in self._cache:
            return
        n = len(self.relevance)
        if n == 0:
            self._cache.update(queries=pa.array([], pa.string()),
                               offsets=np.zeros(1, np.int64), row_query=np.zeros(0, np.int64))
            return
        starts = np.ones(n, dtype=bool)
        if n > 1:
            starts[1:] = pc.not_equal(self.query_id[1:], self.query_id[:-1]).to_numpy(
                zero_copy_only=False)
        first = np.flatnonzero(starts)
        self._cache["queries"] = arrow.take(self.query_id, first)
        self._cache["offsets"] = np.append(first, n).astype(np.int64)
        self._cache["row_query"] = np.cumsum(starts) - 1

    def relevant_counts(self, level: int) -> np.ndarray:
        """int64 per judged query: judgments with grade >= level."""
        key = ("relevant", level)
        if key not in self._cache:
            self._index()
            hits = self._cache["row_query"][self.relevance >= level]
            self._cache[key] = np.bincount(hits, minlength=len(self.queries)).astype(np.int64)
        return self._cache[key]

    def query_index(self, query_ids: pa.Array) -> np.ndarray:
        """Position of each id among the judged queries, -1 for a query without judgments."""
        if "query_lookup" not in self._cache:
            self._cache["query_lookup"] = SortedStrings(self.queries)
        return self._cache["query_lookup"].index(query_ids)

    def lookup(self, query_index: np.ndarray, skill_ids: pa.Array) -> np.ndarray:
        """Grade of each (judged query index, skill id) pair; ``UNJUDGED`` when not judged."""
        if "skills" not in self._cache:
            self._index()
            skills = pc.unique(self.skill_id)
            skills = arrow.take(skills, pc.array_sort_indices(skills))
            sidx = pc.index_in(self.skill_id, value_set=skills).to_numpy().astype(np.int64)
            self._cache["skills"] = skills
            self._cache["keys"] = self._cache["row_query"] * len(skills) + sidx
        skills, keys = self._cache["skills"], self._cache["keys"]
        out = np.full(len(query_index), UNJUDGED, dtype=np.int64)
        if len(query_index) == 0 or len(keys) == 0:
            return out
        sidx = pc.fill_null(pc.index_in(skill_ids, value_set=skills), -1)
        sidx = sidx.to_numpy(zero_copy_only=False).astype(np.int64)
        key = query_index * len(skills) + sidx
        pos = np.searchsorted(keys, key)
        pos = np.minimum(pos, len(keys) - 1)
        found = (query_index >= 0) & (sidx >= 0) & (keys[pos] == key)
        out[found] = self.relevance[pos[found]]
        return out

    def lookup_prints(self, query_index: np.ndarray, ids: EqualLengthIds,
                      rows: np.ndarray) -> np.ndarray | None:
        """:meth:`lookup` for the ids ``ids`` holds at ``rows``, by fingerprint.

        Each result is compared with every judgment of its query: a few (1 to 3 in SkillRet),
        so this beats hashing the ids. Equal prints are confirmed byte for byte. Returns None
        (use :meth:`lookup`) when queries carry so many judgments that the comparisons would
        outnumber the results more than :data:`PRINT_LOOKUP_FANOUT` times.
        """
        n = len(rows)
        out = np.full(n, UNJUDGED, dtype=np.int64)
        if n == 0 or len(self) == 0:
            return out
        offsets = self.offsets
        judged = query_index >= 0
        query = np.where(judged, query_index, 0)
        start = offsets[query]
        count = np.where(judged, offsets[query + 1] - start, 0)
        total = int(count.sum())
        if total > PRINT_LOOKUP_FANOUT * n:
            return None
        prints, matrix, fits = self._prints(ids.width)
        probe = np.repeat(np.arange(n), count)
        judgment = np.repeat(start - (np.cumsum(count) - count), count) + np.arange(total)
        hit = (prints[judgment] == ids.prints[rows][probe]) & fits[judgment]
        probe, judgment = probe[hit], judgment[hit]
        exact = (matrix[judgment] == ids.matrix[rows[probe]]).all(axis=1)
        out[probe[exact]] = self.relevance[judgment[exact]]
        return out

    def _prints(self, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Judged skill ids of ``width`` bytes: (prints, [n, width] bytes, whether the id has
        that length); ids of another length can never match and are masked out."""
        key = ("prints", width)
        if key not in self._cache:
            fixed, lengths = fixed_width(self.skill_id, width)
            matrix = fixed.view(np.uint8).reshape(len(fixed), width)
            self._cache[key] = (EqualLengthIds(matrix).prints, matrix, lengths == width)
        return self._cache[key]

    def ideal(self, query_index: np.ndarray, depth: int) -> np.ndarray:
        """float64 [len(query_index), depth]: each query's positive grades, descending, 0-padded."""
        if "positive" not in self._cache:
            self._index()
            rq = self._cache["row_query"]
            positive = self.relevance > 0
            order = np.lexsort((-self.relevance[positive], rq[positive]))
            grades = self.relevance[positive][order]
            counts = np.bincount(rq[positive], minlength=len(self.queries))
            self._cache["positive"] = (grades.astype(np.float64),
                                       np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                                       counts)
        grades, starts, counts = self._cache["positive"]
        n = len(query_index)
        out = np.zeros((n, depth), dtype=np.float64)
        judged = query_index >= 0
        take = np.zeros(n, dtype=np.int64)
        take[judged] = np.minimum(counts[query_index[judged]], depth)
        total = int(take.sum())
        if total:
            rows = np.repeat(np.arange(n), take)
            begin = np.repeat(np.where(judged, starts[np.maximum(query_index, 0)], 0), take)
            within = np.arange(total) - np.repeat(np.cumsum(take) - take, take)
            out[rows, within] = grades[begin + within]
        return out

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, s, r in zip(self.query_id.to_pylist(), self.skill_id.to_pylist(),
                           self.relevance.tolist()):
            out.setdefault(q, {})[s] = r
        return out

    def stats(self) -> dict:
        """Counts a reader of the qrels wants to see: queries, pairs, grades, skills per query."""
        self._index()
        grades, counts = np.unique(self.relevance, return_counts=True)
        per_query = np.diff(self.offsets)
        required = self.relevant_counts(1)
        hist = np.bincount(required) if len(required) else np.zeros(1, np.int64)
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
