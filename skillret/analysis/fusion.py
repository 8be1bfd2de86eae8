"""Fusion: one ranked run from several, by RRF, CombSUM or CombMNZ.

Definitions (a run's ranks and every order below follow trec_eval's tie rule, the one
`skillret.scoring.ordering` implements: score descending compared as 32-bit floats, equal
scores broken by skill id descending in byte order; ranks are 1-based):

- **RRF** (Cormack et al., 2009): `sum over runs r of w_r / (k + rank_r(s))`; a skill absent
  from a run adds nothing. Scores are not normalised (`norm` must not be given).
- **CombSUM** (Fox & Shaw, 1993): `sum over runs r holding s of w_r * norm_r(s)`.
- **CombMNZ**: CombSUM times the number of runs that hold the skill.
- `norm` (per query and run, over that run's ranking of the query):
  `minmax`: `(s - min) / (max - min)`, and 1 when all the scores are equal;
  `zscore`: `(s - mean) / sd` with the population standard deviation (ddof=0, numpy's and
  ranx's `zmuv`), and 0 when all the scores are equal (or sd underflows to 0);
  `none`: the scores as they are. CombSUM and CombMNZ default to `minmax`.
- Weights `w_r` default to 1 and are named by run.

The fused run holds the union of the runs' queries, listed in query-id order (byte order); a
query that no run retrieved anything for stays in it as an empty ranking (JSON and Parquet
outputs show it; TREC cannot). Each query's results are ordered by fused score descending, the
scores compared as 32-bit floats as trec_eval will compare them when the fused run is scored,
then by skill id descending, and cut at `depth`: the order written is the order scored.
A fused score is the sum of the runs' contributions in the order the runs were given.

Routes: runs that can be streamed (TREC, Parquet) and list their queries in ascending id
order are merged query chunk by query chunk (a sort-merge on the query id: a query is fused
once every run has read past it), in memory bounded by a chunk per run. Runs in another
order, or in formats read whole (JSON, CSV...), are read into memory and fused at once. Both
routes share the kernel, and give the same bytes.

This is the core: it fuses loaded runs and opened run files (`Run`,
`RunSource`). `skillret.fuse` (`skillret.api`) takes paths and
dicts too; `skillret.pipeline.fused_runs.fuse_to_file` fuses run files into a file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from skillret.analysis.fusion_merge import Stream, Unsorted, fuse_whole, merged
from skillret.analysis.fusion_methods import Ranked
from skillret.analysis.fusion_spec import DEFAULT_DEPTH, DEFAULT_K, Fusion
from skillret.columnar import arrow
from skillret.columnar.runs import NotGrouped, OpenedRun, Run
from skillret.errors import ConfigError
from skillret.io.prefetch import prefetch


def run_names(runs) -> tuple[list[str], list]:
    """Names and runs from a mapping, or from paths named by file stem."""
    if isinstance(runs, Mapping):
        names, values = [str(n) for n in runs], list(runs.values())
    else:
        values = list(runs)
        names = [run_stem(v) if isinstance(v, (str, os.PathLike)) else f"run{i + 1}"
                 for i, v in enumerate(values)]
    if len(values) < 2:
        raise ConfigError("fusion needs at least two runs")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"two runs are named {repeated[0]!r}: name them (NAME=PATH)")
    return names, values


def run_stem(path: str | os.PathLike) -> str:
    """`runs/bm25.trec.gz` -> `bm25`."""
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


def fused_run(fusion: Fusion, runs: Mapping[str, OpenedRun]) -> Run:
    """`runs` (`{name: run}`, loaded or opened; a file is read whole) fused in memory into a
    `Run` with its rank column."""
    names = list(runs)
    weight = fusion.weight_vector(names)
    ranked = fuse_whole([_whole(r) for r in runs.values()], fusion, weight, names)
    return Run.from_columns(arrow.take(ranked.queries, ranked.row_query), ranked.skill_id,
                            ranked.score, queries=ranked.queries, rank=ranked.rank)


def write_fusion(fusion: Fusion, runs: Mapping[str, OpenedRun], output: str | os.PathLike,
                 tmp: str | os.PathLike, *, tag: str,
                 notices: list[str] | None = None) -> dict:
    """Fuse `runs` (`{name: run}`, opened run files or loaded runs) into `tmp`, a run in
    `output`'s format (messages name `output`); returns counts.

    Sort-merged when every run streams its queries in ascending id order; otherwise (a note is
    added to `notices`) the runs are read into memory and fused at once, `tmp` written
    again from the start.
    """
    names, sources = list(runs), list(runs.values())
    weight = fusion.weight_vector(names)
    counts = {"queries": 0, "empty": 0, "rows": 0}
    readers = [prefetch(source.chunks(), size=1) for source in sources]
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
        loaded = [_whole(source) for source in sources]
        counts = _write([fuse_whole(loaded, fusion, weight, names)], output, tmp, tag)
        counts["merged"] = False
    return counts


def _whole(run: OpenedRun) -> Run:
    """A run to fuse in memory: a `Run` as it is, a run file
    read whole (and held to the per-query limit a streamed run has)."""
    return run if isinstance(run, Run) else run.read().check_results()


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


__all__ = ["fused_run", "write_fusion", "run_names", "run_stem", "Fusion", "DEFAULT_K",
           "DEFAULT_DEPTH"]
