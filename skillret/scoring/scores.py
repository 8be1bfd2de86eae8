"""A scored run: the metrics of each profile, query counts, and per-query values."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from skillret.columnar import arrow
from skillret.scoring.results import QueryResults
from skillret.columnar.qrels import Qrels
from skillret.scoring.names import format_metric
from skillret.scoring.profiles import Profile


@dataclass
class Scores:
    """A scored run: one metrics mapping per profile, query counts, and per-query values."""

    profiles: list[Profile]
    metrics: dict[str, dict[str, float]]
    query_counts: dict                       # judged, in_run, ..., evaluated per profile
    results: QueryResults
    qrels: Qrels
    notices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)   # e.g. swapped score and rank columns

    @property
    def queries(self) -> dict:
        """Deprecated name of :attr:`query_counts` (it holds counts, not queries)."""
        warnings.warn("Scores.queries is now Scores.query_counts", DeprecationWarning,
                      stacklevel=2)
        return self.query_counts

    def to_dict(self) -> dict:
        """``{"<profile>": {"<metric>@<K>": value}, "queries": {...}}``: plain numbers."""
        return {**self.metrics, "queries": self.query_counts}

    def per_query(self, profile: str | Profile | None = None):
        """A DataFrame, one row per query.

        With a profile: the queries of its query set, its metrics as columns. Without: every
        judged query, an ``in_run`` column (the official set is the rows where it is true), and
        every metric of every profile (a level other than 1 is written in the name:
        ``NDCG(rel=2)@10``).
        """
        import pandas as pd
        return pd.DataFrame(self.per_query_columns(profile))

    def per_query_columns(self, profile: str | Profile | None = None) -> dict[str, object]:
        """Columns of :meth:`per_query` as arrays, rows sorted by query id."""
        qrels, res = self.qrels, self.results
        judged_ids = qrels.queries
        n = len(judged_ids)
        pos = np.full(n, -1, dtype=np.int64)          # row of each judged query in the results
        mask = res.judged_index >= 0
        pos[res.judged_index[mask]] = np.flatnonzero(mask)
        in_run = pos >= 0
        if profile is not None:
            prof = profile if isinstance(profile, Profile) else self._profile(profile)
            metrics = prof.parsed()
            levels = [prof.relevance_level]
            rows = np.flatnonzero(in_run) if prof.run_queries_only else np.arange(n)
            names = {m: m.short_name() for m in metrics}
        else:
            metrics = list(dict.fromkeys(m for p in self.profiles for m in p.parsed()))
            levels = sorted({m.rel for m in metrics})
            rows = np.arange(n)
            names = {m: format_metric(m) for m in metrics}
        cols: dict[str, object] = {"query_id": np.array(arrow.take(judged_ids, rows).to_pylist(),
                                                        dtype=object)}
        if profile is None:
            cols["in_run"] = in_run[rows]
        safe = np.maximum(pos[rows], 0)
        hit = in_run[rows]
        cols["retrieved"] = np.where(hit, res.retrieved[safe] if len(res.retrieved) else 0, 0)
        for level in levels:
            name = "relevant" if level == 1 else f"relevant(rel={level})"
            cols[name] = qrels.relevant_counts(level)[rows]
        for metric in metrics:
            values = res.values[metric]
            cols[names[metric]] = np.where(hit, values[safe] if len(values) else 0.0, 0.0)
        return cols

    def _profile(self, name: str) -> Profile:
        for p in self.profiles:
            if p.name == name:
                return p
        raise KeyError(f"profile {name!r} was not scored (scored: "
                       f"{', '.join(p.name for p in self.profiles)})")


__all__ = ["Scores"]
