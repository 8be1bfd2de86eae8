"""Score a run under profiles: the driver behind ``skillret.evaluate``, the CLI and the pipeline.

It reads the run the cheapest correct way (streamed when it is a query-contiguous TREC file,
in memory otherwise), evaluates the union of the profiles' metrics in one pass, and aggregates
each profile.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence, TypeVar

import numpy as np

from . import arrow
from .aggregate import aggregate, query_counts
from .engine import QueryResults, evaluate_chunks
from .errors import InputError
from .io import RunSource, load_qrels, run_input
from .judgments import Qrels
from .names import Metric, format_metric
from .prefetch import prefetch
from .profiles import Profile, resolve_profiles
from .runs import NotContiguous, Run, RunChunk, chunk_batches

T = TypeVar("T")

NOT_CONTIGUOUS = ("{path}: the rows of a query are not consecutive, so the run was read into "
                  "memory instead of streamed; to stream it, group it by query first: "
                  "sort -k1,1 -s {path} > sorted.trec")


@dataclass
class Scores:
    """A scored run: one metrics mapping per profile, query counts, and per-query values."""

    profiles: list[Profile]
    metrics: dict[str, dict[str, float]]
    query_counts: dict                       # judged, in_run, ..., evaluated per profile
    results: QueryResults
    qrels: Qrels
    notices: list[str] = field(default_factory=list)

    @property
    def queries(self) -> dict:
        """Deprecated name of :attr:`query_counts` (it holds counts, not queries)."""
        import warnings
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
        cols: dict[str, object] = {"query_id": arrow.take(judged_ids, rows).to_numpy(
            zero_copy_only=False)}
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


def consume_chunks(run: Run | RunSource, consume: Callable[[Iterator[RunChunk], str | None], T],
                   *, with_rank: bool = False) -> tuple[T, list[str], Run | None]:
    """``consume(chunks, source)``: streamed when ``run`` is a query-contiguous TREC source.

    When the stream turns out not to be query-contiguous, the run is read into memory and
    ``consume`` starts over with a fresh iterator (so it must not keep state between calls).
    Returns the result, notices for the user, and the run if it was read into memory.
    """
    notices: list[str] = []
    if isinstance(run, RunSource):
        source = run.source
        if run.streamable:
            try:
                batches = prefetch(run.batches(with_rank=with_rank))
                try:
                    out = consume(chunk_batches(batches, source=source), source)
                finally:
                    batches.close()
                return out, notices, None
            except NotContiguous:
                notices.append(NOT_CONTIGUOUS.format(path=source))
        run = run.read(with_rank=with_rank)
    return consume(run.chunks(), run.source), notices, run


def evaluate_run(qrels: Qrels | Callable[[], Qrels], run: Run | RunSource,
                 metrics: Sequence[Metric]) -> tuple[QueryResults, list[str]]:
    """Per-query values of ``metrics``; streams a TREC source when it is query-contiguous.

    ``qrels`` may be a function that loads them: it is called once the run's reader has
    started, so that the qrels load while the run is parsed.
    """
    def consume(chunks, source):
        loaded = qrels() if callable(qrels) else qrels
        return evaluate_chunks(chunks, loaded, metrics, source=source)
    results, notices, _ = consume_chunks(run, consume)
    return results, notices


def check_overlap(qrels: Qrels, results: QueryResults, run_source: str | None) -> None:
    """Refuse a run that shares no query with the qrels: almost always the wrong split."""
    if len(qrels.queries) and not len(results.queries):
        raise InputError(run_source, "no query in common with the qrels: the run holds no "
                                     "rankings")
    if len(results.queries) and len(qrels.queries) and not (results.judged_index >= 0).any():
        raise InputError(
            run_source,
            f"no query in common with the qrels ({len(results.queries)} run queries, e.g. "
            f"{results.queries[0].as_py()!r}; {len(qrels.queries)} judged, e.g. "
            f"{qrels.queries[0].as_py()!r})",
            hint="wrong split or qrels version? SkillRet v1.0's test split had 4,997 queries, "
                 "v1.1 has 4,392")


def score(qrels, run, profiles: Sequence[str | Profile] | str | Profile = "official", *,
          relevance_level: int | None = None, define: dict | None = None,
          extra_metrics: Sequence[Metric] = ()) -> Scores:
    """Score ``run`` against ``qrels`` under ``profiles``.

    ``qrels`` and ``run`` may be paths, pytrec_eval-style dicts, DataFrames, or loaded
    objects; a run path (or :class:`~skillret.io.RunSource`) is streamed when possible.
    ``extra_metrics`` are computed per query too (the pipeline's plots use them).
    """
    if isinstance(profiles, (str, Profile)):
        profiles = [profiles]
    names = [p for p in profiles if isinstance(p, str)]
    resolved = iter(resolve_profiles(names, define=define, relevance_level=relevance_level)
                    if names else [])
    plist = [p if isinstance(p, Profile) else next(resolved) for p in profiles]
    run = run_input(run)  # a path is streamed, like the CLI's, when the file allows it
    metrics = list(dict.fromkeys([m for p in plist for m in p.parsed()] + list(extra_metrics)))
    load = functools.cache(lambda: load_qrels(qrels))  # loads while the run is being parsed
    results, notices = evaluate_run(load, run, metrics)
    judged = load()
    check_overlap(judged, results, run.source)
    out = {p.name: aggregate(p, results, judged) for p in plist}
    return Scores(plist, out, query_counts(results, judged, plist), results, judged, notices)


__all__ = ["Scores", "score", "evaluate_run", "consume_chunks", "check_overlap"]
