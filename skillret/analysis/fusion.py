"""Fusion: one ranked run from several, by RRF, CombSUM or CombMNZ.

Definitions (a run's ranks and every order below follow trec_eval's tie rule, the one
:mod:`skillret.scoring.ordering` implements: score descending compared as 32-bit floats, equal
scores broken by skill id descending in byte order; ranks are 1-based):

- **RRF** (Cormack et al., 2009): ``sum over runs r of w_r / (k + rank_r(s))``; a skill absent
  from a run adds nothing. Scores are not normalised (``norm`` must not be given).
- **CombSUM** (Fox & Shaw, 1993): ``sum over runs r holding s of w_r * norm_r(s)``.
- **CombMNZ**: CombSUM times the number of runs that hold the skill.
- ``norm`` (per query and run, over that run's ranking of the query):
  ``minmax``: ``(s - min) / (max - min)``, and 1 when all the scores are equal;
  ``zscore``: ``(s - mean) / sd`` with the population standard deviation (ddof=0, numpy's and
  ranx's ``zmuv``), and 0 when all the scores are equal (or sd underflows to 0);
  ``none``: the scores as they are. CombSUM and CombMNZ default to ``minmax``.
- Weights ``w_r`` default to 1 and are named by run.

The fused run holds the union of the runs' queries, listed in query-id order (byte order); a
query that no run retrieved anything for stays in it as an empty ranking (JSON and Parquet
outputs show it; TREC cannot). Each query's results are ordered by fused score descending, the
scores compared as 32-bit floats as trec_eval will compare them when the fused run is scored,
then by skill id descending, and cut at ``depth``: the order written is the order scored.
A fused score is the sum of the runs' contributions in the order the runs were given.

Routes: runs that can be streamed (TREC, Parquet) and list their queries in ascending id
order are merged query chunk by query chunk (a sort-merge on the query id: a query is fused
once every run has read past it), in memory bounded by a chunk per run. Runs in another
order, or in formats read whole (JSON, CSV...), are read into memory and fused at once. Both
routes share the kernel, and give the same bytes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import numpy as np

from skillret.analysis.fusion_merge import Stream, Unsorted, fuse_whole, merged
from skillret.analysis.fusion_methods import DEFAULT_DEPTH, DEFAULT_K, Fusion, Ranked
from skillret.columnar import arrow
from skillret.columnar.runs import NotGrouped, Run
from skillret.errors import ConfigError, InputError
from skillret.io.prefetch import prefetch
from skillret.io.readers import RunSource, open_run


def query_chunks(path: str | os.PathLike) -> Iterator:
    """A run file as chunks of whole queries (:meth:`skillret.io.readers.RunSource.chunks`:
    streamed when its format allows)."""
    return open_run(path).chunks()


def _loaded(run) -> Run:
    """A run to fuse, loaded: the one place fusion takes a path, an opened
    :class:`~skillret.io.readers.RunSource`, a dict or a Run."""
    if isinstance(run, (str, os.PathLike, RunSource)):
        return open_run(run).read().check_results()  # the limit a streamed run has
    return open_run(run)  # a Run, or what json.load gives (TypeError for anything else)


def run_names(runs) -> tuple[list[str], list]:
    """Names and runs from a mapping, or from paths named by file stem."""
    if isinstance(runs, Mapping):
        names, values = [str(n) for n in runs], list(runs.values())
    else:
        values = list(runs)
        names = [run_stem(v.path if isinstance(v, RunSource) else v)
                 if isinstance(v, (str, os.PathLike, RunSource)) else f"run{i + 1}"
                 for i, v in enumerate(values)]
    if len(values) < 2:
        raise ConfigError("fusion needs at least two runs")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"two runs are named {repeated[0]!r}: name them (NAME=PATH)")
    return names, values


def run_stem(path: str | os.PathLike) -> str:
    """``runs/bm25.trec.gz`` -> ``bm25``."""
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


def fuse(runs, *, method: str = "rrf", k: float = DEFAULT_K, norm: str | None = None,
         weights: Mapping[str, float] | None = None, depth: int = DEFAULT_DEPTH):
    """Fuse runs in memory; returns a :class:`skillret.Run` (with its rank column).

    ``runs``: ``{name: run}`` or a list of runs; a run is a path (any readable format), an
    opened :class:`~skillret.io.readers.RunSource`, a ``{query: {skill: score}}`` dict or a
    :class:`skillret.Run`. Paths are named by file stem.

        >>> skillret.analysis.fusion.fuse(["bm25.trec", "dense.trec"], method="rrf")
    """
    fusion = Fusion(method, k, norm, dict(weights or {}), depth)
    names, values = run_names(runs)
    weight = fusion.weight_vector(names)
    ranked = fuse_whole([_loaded(v) for v in values], fusion, weight, names)
    return Run.from_columns(arrow.take(ranked.queries, ranked.row_query), ranked.skill_id,
                            ranked.score, queries=ranked.queries, rank=ranked.rank)


def fuse_to_file(runs, output: str | os.PathLike, *, method: str = "rrf",
                 k: float = DEFAULT_K, norm: str | None = None,
                 weights: Mapping[str, float] | None = None, depth: int = DEFAULT_DEPTH,
                 tag: str | None = None, notices: list[str] | None = None,
                 atomic: bool = True) -> dict:
    """Fuse run files into ``output`` (format by extension), atomically; returns counts.

    ``runs``: ``{name: path}`` or a list of paths (named by file stem); a run may also be an
    opened :class:`~skillret.io.readers.RunSource` (``open_run(path, fmt=..., columns=...,
    split=...)``), read as it says. Streams when it can
    (see the module doc); a note is added to ``notices`` when it could not. ``atomic=False``
    writes ``output`` in place (an intermediate file in a temporary directory, which must exist
    at once rather than when the command's set of outputs is complete).
    """
    import contextlib

    from skillret.io.atomic import atomic_path
    from skillret.io.write_runs import run_format

    fusion = Fusion(method, k, norm, dict(weights or {}), depth)
    names, paths = run_names(runs)
    weight = fusion.weight_vector(names)
    run_format(output)
    for path in paths:
        file = path.path if isinstance(path, RunSource) else path
        if not os.path.exists(file):
            raise InputError(file, "no such run file")
    tag = tag or run_stem(output)
    counts = {"queries": 0, "empty": 0, "rows": 0}
    with (atomic_path(output) if atomic else contextlib.nullcontext(output)) as tmp:
        readers = [prefetch(query_chunks(p), size=1) for p in paths]
        try:
            streams = [Stream(n, r) for n, r in zip(names, readers)]
            counts = _write(merged(streams, fusion, weight, names), output, tmp, tag)
            counts["merged"] = True
        except Unsorted as exc:
            if notices is not None:
                notices.append(f"{exc}: queries not in ascending id order, so the runs were "
                               "read into memory instead of sort-merged")
        except NotGrouped as exc:
            if notices is not None:
                notices.append(f"{exc}: a run's queries are not grouped, so the runs were read "
                               "into memory instead of sort-merged")
        finally:  # no reader thread outlives the merge (one left at exit can crash it)
            for reader in readers:
                reader.close()
        if "merged" not in counts:
            loaded = [_loaded(p) for p in paths]
            counts = _write([fuse_whole(loaded, fusion, weight, names)], output, tmp, tag)
            counts["merged"] = False
    return counts


def _write(batches: Iterable[Ranked], output, tmp, tag: str) -> dict:
    from skillret.io.write_runs import open_writer
    writer = open_writer(output, tmp, tag=tag)
    counts = {"queries": 0, "empty": 0, "rows": 0}
    try:
        for ranked in batches:
            writer.write(ranked.queries, ranked.row_query, ranked.skill_id, ranked.score,
                         ranked.rank, distinct_skills=ranked.distinct_skills)
            counts["queries"] += len(ranked.queries)
            counts["empty"] += len(ranked.queries) - len(np.unique(ranked.row_query))
            counts["rows"] += len(ranked)
    finally:
        writer.close()
    return counts


__all__ = ["fuse", "fuse_to_file", "run_names", "run_stem", "query_chunks", "Fusion",
           "DEFAULT_K", "DEFAULT_DEPTH"]
