"""Which queries broke: the queries whose metric changed most between two sides (two runs, or
one run at two revisions), and for each, where the skills it needed ranked on each side.

- **Selection** (`select`): per-query values of one metric on both sides, paired over the
  queries both hold (as `compare` pairs them); the `worst` largest losses (B below A) and
  the `best` largest gains, ties in query-id order (a stable sort over sorted ids, as
  `compare`'s Markdown report lists them).
- **Rankings** (`rankings`): a side's results for the selected queries only, ranked by
  the tie rule scoring uses (`skillret.scoring.ordering.rank_order`: score as a 32-bit
  float descending, then skill id descending), so a rank here is the rank the metric saw.
- **Explanation** (`explain`): for each query, every *needed* skill (judged with a grade
  at or above the metric's relevance level), its grade and its rank on each side (`None`:
  not retrieved, past the run's depth); and the skills *in their place*: the results within the
  metric's cutoff on the side that did worse that are not needed, at most `shown`.

Nothing here reads files or renders (`skillret.render.queries`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from skillret.errors import ConfigError

IN_PLACE_SHOWN = 5


@dataclass
class Selected:
    """The paired queries and the ones chosen: `losses` and `gains` hold row indices into
    `query_ids`, largest change first."""

    metric: str
    query_ids: np.ndarray
    a: np.ndarray
    b: np.ndarray
    losses: list[int]
    gains: list[int]

    @property
    def counts(self) -> dict[str, int]:
        diff = self.b - self.a
        return {"better": int((diff > 0).sum()), "unchanged": int((diff == 0).sum()),
                "worse": int((diff < 0).sum())}

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
    """Everything `queries` shows: labels of the two sides, the metric, the counts, and the
    explained losses and gains."""

    label_a: str
    label_b: str
    metric: str
    queries: int
    counts: dict[str, int]
    cutoff: int
    losses: list[QueryChange]
    gains: list[QueryChange]
    title: str | None = None    # e.g. the run compared across two revisions


def select(a, b, metric: str, *, worst: int = 10, best: int = 10) -> Selected:
    """`a`, `b`: `PerQuery` holding `metric`."""
    if worst < 0 or best < 0:
        raise ConfigError("--worst and --best must be >= 0")
    # PerQuery's ids are sorted and unique: no np.unique (whose masked-array check would
    # import numpy.ma, 7 ms of the command)
    ids = np.intersect1d(a.query_ids, b.query_ids, assume_unique=True)
    if not len(ids):
        raise ConfigError(f"{a.source} and {b.source} have no query in common")
    va = a.values[metric][np.searchsorted(a.query_ids, ids)]
    vb = b.values[metric][np.searchsorted(b.query_ids, ids)]
    diff = vb - va
    losses = [int(i) for i in np.argsort(diff, kind="stable")[:worst] if diff[i] < 0]
    gains = [int(i) for i in np.argsort(-diff, kind="stable")[:best] if diff[i] > 0]
    return Selected(metric, ids, va, vb, losses, gains)


def rankings(query_id, skill_id, score, wanted: list[str]) -> dict[str, list[str]]:
    """`{query: skill ids in rank order}` for the `wanted` queries of a run given as
    columns (pyarrow strings, float scores); a wanted query the run lacks maps to `[]`."""
    import pyarrow.compute as pc

    from skillret.columnar import arrow
    from skillret.scoring.ordering import rank_order

    # (arrow's helpers, not pa.array: its pandas probe would import pandas, 0.3 s)
    out: dict[str, list[str]] = {q: [] for q in wanted}
    if not wanted or not len(query_id):
        return out
    position = pc.index_in(query_id, value_set=arrow.strings(list(wanted)))
    keep = pc.is_valid(position)
    if not isinstance(skill_id, np.ndarray) and skill_id.null_count:
        # a row with a null skill is no result: the canonical form of an empty ranking
        keep = pc.and_(keep, pc.is_valid(skill_id))
    keep = arrow.to_numpy(keep)
    rows = np.flatnonzero(keep)
    if not len(rows):
        return out
    row_query = arrow.to_numpy(arrow.filter(position, keep)).astype(np.int64)
    order = np.argsort(row_query, kind="stable")
    rows, row_query = rows[order], row_query[order]
    skills = arrow.take(skill_id, rows) if not isinstance(skill_id, np.ndarray) else \
        arrow.strings([str(s) for s in skill_id[rows]])
    scores = np.asarray(score, dtype=np.float64)[rows]
    perm, _ = rank_order(row_query, scores, skills)
    if perm is not None:
        row_query = row_query[perm]
        skills = arrow.take(skills, perm)
    names = skills.to_pylist()
    for q, s in zip(row_query.tolist(), names):
        out[wanted[q]].append(s)
    return out


def _judgments(qrels, wanted: list[str]) -> dict[str, dict[str, int]]:
    """`{query: {skill: grade}}` for the wanted queries, found among the judged queries by
    one lookup (nothing is done per judged query)."""
    import pyarrow.compute as pc

    from skillret.columnar import arrow

    out: dict[str, dict[str, int]] = {q: {} for q in wanted}
    if not wanted:
        return out
    # (arrow's helpers, not pc.fill_null: its pa.scalar would import pandas, 0.3 s)
    position = pc.index_in(arrow.strings(list(wanted)), value_set=qrels.queries)
    found = arrow.to_numpy(pc.is_valid(position))
    judged = arrow.to_numpy(arrow.filter(position, found)).tolist()
    for w, i in zip(np.flatnonzero(found).tolist(), judged):
        q = wanted[w]
        start, stop = int(qrels.offsets[i]), int(qrels.offsets[i + 1])
        skills = qrels.skill_id.slice(start, stop - start).to_pylist()
        out[q] = dict(zip(skills, qrels.relevance[start:stop].tolist()))
    return out


def explain(selected: Selected, qrels, ranked_a: dict[str, list[str]],
            ranked_b: dict[str, list[str]], *, label_a: str, label_b: str,
            texts: dict[str, str] | None = None, names: dict[str, str] | None = None,
            shown: int = IN_PLACE_SHOWN, title: str | None = None) -> QueryReport:
    """The report of the selected queries (see the module)."""
    from skillret.scoring.names import parse_metric

    parsed = parse_metric(selected.metric)
    level, cutoff = parsed.rel, parsed.k
    texts, names = texts or {}, names or {}
    judged = _judgments(qrels, selected.chosen())

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
        place = [s for s in top if grades.get(s, 0) < level][:shown]
        row = lambda s: SkillRow(s, grades.get(s), rank_a.get(s), rank_b.get(s),  # noqa: E731
                                 names.get(s))
        return QueryChange(q, float(selected.a[i]), float(selected.b[i]), texts.get(q),
                           [row(s) for s in needed], [row(s) for s in place],
                           "b" if worse_b else "a")

    return QueryReport(label_a, label_b, selected.metric, len(selected.query_ids),
                       selected.counts, cutoff, [change(i) for i in selected.losses],
                       [change(i) for i in selected.gains], title)


def shown_skill_ids(report: QueryReport) -> list[str]:
    """Every skill the report shows (needed or in their place), sorted."""
    return sorted({r.skill_id for q in report.losses + report.gains
                   for r in q.needed + q.in_place})


def name_skills(report: QueryReport, names: dict[str, str]) -> QueryReport:
    """The report with each shown skill's name filled in from `names` (when it has one)."""
    for q in report.losses + report.gains:
        for row in q.needed + q.in_place:
            row.name = names.get(row.skill_id, row.name)
    return report


__all__ = ["Selected", "SkillRow", "QueryChange", "QueryReport", "select", "rankings",
           "explain", "shown_skill_ids", "name_skills", "IN_PLACE_SHOWN"]
