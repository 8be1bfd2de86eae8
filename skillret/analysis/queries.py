"""The queries whose metric changed most between two sides, and where their needed skills ranked.

- `select`: the `worst` losses (B below A) and `best` gains, ties in query-id order.
- `KeptRows`: rankings re-read by scoring's tie rule, so a rank is the one the metric saw.
- `explain`: per query, needed skills (grade >= the metric's level) with ranks (None: not
  retrieved), and up to `IN_PLACE_SHOWN` unneeded results within the cutoff on the worse side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.runs import RunChunk
from skillret.columnar.strings import as_string_array
from skillret.errors import ConfigError
from skillret.scoring.names import parse_metric
from skillret.scoring.ordering import rank_order

IN_PLACE_SHOWN = 5


@dataclass
class Selected:
    """`losses`, `gains`: indices into `query_ids`, largest change first."""

    metric: str
    query_ids: np.ndarray
    a: np.ndarray
    b: np.ndarray
    losses: list[int]
    gains: list[int]

    def chosen(self) -> list[str]:
        return [str(self.query_ids[i]) for i in self.losses + self.gains]


@dataclass
class SkillRow:
    skill_id: str
    grade: int | None          # None: not judged
    rank_a: int | None         # None: not retrieved
    rank_b: int | None
    name: str | None = None


@dataclass
class QueryChange:
    query_id: str
    a: float
    b: float
    text: str | None = None
    needed: list[SkillRow] = field(default_factory=list)
    in_place: list[SkillRow] = field(default_factory=list)
    worse_side: str = "b"       # whose top results "in_place" lists

    @property
    def change(self) -> float:
        return self.b - self.a


@dataclass
class QueryReport:
    """Everything `queries` shows."""

    label_a: str
    label_b: str
    metric: str
    queries: int
    counts: dict[str, int]
    cutoff: int
    losses: list[QueryChange]
    gains: list[QueryChange]
    title: str | None = None    # e.g. the run compared across two revisions


class KeptRows:
    """A run's rows kept as the scorer reads them (`watch=`), then `rankings`."""

    def __init__(self) -> None:
        self._parts: list[tuple[pa.Array, np.ndarray, pa.Array, np.ndarray]] = []

    def watch(self, chunks: Iterable[RunChunk]) -> Iterator[RunChunk]:
        """The chunks passed through and kept; a second call (run re-read whole) starts over."""
        self._parts = []
        for chunk in chunks:
            self._parts.append((chunk.queries, chunk.row_query, chunk.skill_id, chunk.score))
            yield chunk

    @classmethod
    def of_table(cls, table: pa.Table) -> KeptRows:
        """A run table (query_id, skill_id, score); dictionary-encoded ids stay encoded."""
        kept = cls()
        skills = table.column("skill_id")
        if skills.null_count:      # an empty ranking is one row with a null skill: no result
            table = table.filter(pc.is_valid(skills))
        for batch in table.to_batches():
            queries = batch.column("query_id")
            if not pa.types.is_dictionary(queries.type):
                queries = pc.dictionary_encode(queries)
            kept._parts.append((queries.dictionary,
                                arrow.to_numpy(queries.indices).astype(np.int64),
                                batch.column("skill_id"),
                                arrow.to_numpy(batch.column("score"))))
        return kept

    def rankings(self, wanted: list[str]) -> dict[str, list[str]]:
        """`{query: skill ids in rank order}`; `[]` for a query the run lacks."""
        out: dict[str, list[str]] = {q: [] for q in wanted}
        value_set = arrow.strings(list(wanted))
        owners, skills, scores = [], [], []
        for queries, row_query, skill_id, score in self._parts:
            owner = _positions(queries, value_set)[row_query]
            rows = np.flatnonzero(owner >= 0)
            if not len(rows):
                continue
            owners.append(owner[rows])
            skills.append(as_string_array(arrow.take(skill_id, rows)))
            scores.append(np.asarray(score, dtype=np.float64)[rows])
        if not owners:
            return out
        owner = np.concatenate(owners)
        order = np.argsort(owner, kind="stable")
        owner = owner[order]
        ids = arrow.take(pa.concat_arrays(skills) if len(skills) > 1 else skills[0], order)
        perm, _ = rank_order(owner, np.concatenate(scores)[order], ids)
        if perm is not None:
            owner, ids = owner[perm], arrow.take(ids, perm)
        for query, skill in zip(owner.tolist(), ids.to_pylist()):
            out[wanted[query]].append(skill)
        return out


def _positions(values: pa.Array, value_set: pa.Array) -> np.ndarray:
    """Each value's position in `value_set`, -1 if absent."""
    position = pc.fill_null(pc.index_in(values, value_set=value_set), arrow.scalar(np.int32(-1)))
    return arrow.to_numpy(position).astype(np.int64)


def select(a, b, metric: str, *, worst: int = 10, best: int = 10) -> Selected:
    """`a`, `b`: `PerQuery` holding `metric`; `worst`, `best` >= 0."""
    # PerQuery's ids are sorted and unique (np.unique would import numpy.ma)
    ids = np.intersect1d(a.query_ids, b.query_ids, assume_unique=True)
    if not len(ids):
        raise ConfigError(f"{a.source} and {b.source} have no query in common")
    va = a.values[metric][np.searchsorted(a.query_ids, ids)]
    vb = b.values[metric][np.searchsorted(b.query_ids, ids)]
    diff = vb - va
    losses = [int(i) for i in np.argsort(diff, kind="stable")[:worst] if diff[i] < 0]
    gains = [int(i) for i in np.argsort(-diff, kind="stable")[:best] if diff[i] > 0]
    return Selected(metric, ids, va, vb, losses, gains)


def explain(selected: Selected, qrels, ranked_a: dict[str, list[str]],
            ranked_b: dict[str, list[str]], *, label_a: str, label_b: str,
            texts: dict[str, str] | None = None, title: str | None = None) -> QueryReport:
    """The report of the selected queries (see the module); skills' names: `name_skills`."""
    parsed = parse_metric(selected.metric)
    level, cutoff = parsed.rel, parsed.k
    texts = texts or {}
    wanted = selected.chosen()
    judged: dict[str, dict[str, int]] = {}  # {query: {skill: grade}}
    positions = _positions(arrow.strings(wanted), qrels.queries).tolist() if wanted else []
    for q, i in zip(wanted, positions):
        if i >= 0:
            start, stop = int(qrels.offsets[i]), int(qrels.offsets[i + 1])
            skills = qrels.skill_id.slice(start, stop - start).to_pylist()
            judged[q] = dict(zip(skills, qrels.relevance[start:stop].tolist()))

    def change(i: int) -> QueryChange:
        q = str(selected.query_ids[i])
        a_list, b_list = ranked_a.get(q, []), ranked_b.get(q, [])
        rank_a = {s: r for r, s in enumerate(a_list, 1)}
        rank_b = {s: r for r, s in enumerate(b_list, 1)}
        grades = judged.get(q, {})
        needed = sorted((s for s, g in grades.items() if g >= level),
                        key=lambda s: (-grades[s], s))
        worse_b = selected.b[i] < selected.a[i]
        top = (b_list if worse_b else a_list)[:cutoff]
        place = [s for s in top if grades.get(s, 0) < level][:IN_PLACE_SHOWN]
        row = lambda s: SkillRow(s, grades.get(s), rank_a.get(s), rank_b.get(s))  # noqa: E731
        return QueryChange(q, float(selected.a[i]), float(selected.b[i]), texts.get(q),
                           [row(s) for s in needed], [row(s) for s in place],
                           "b" if worse_b else "a")

    diff = selected.b - selected.a
    counts = {"better": int((diff > 0).sum()), "unchanged": int((diff == 0).sum()),
              "worse": int((diff < 0).sum())}
    return QueryReport(label_a, label_b, selected.metric, len(selected.query_ids), counts,
                       cutoff, [change(i) for i in selected.losses],
                       [change(i) for i in selected.gains], title)


def shown_skill_ids(report: QueryReport) -> list[str]:
    """Every skill the report shows, sorted."""
    return sorted({r.skill_id for q in report.losses + report.gains
                   for r in q.needed + q.in_place})


def name_skills(report: QueryReport, names: dict[str, str]) -> QueryReport:
    """Fill in shown skills' names from `names`."""
    for q in report.losses + report.gains:
        for row in q.needed + q.in_place:
            row.name = names.get(row.skill_id, row.name)
    return report
