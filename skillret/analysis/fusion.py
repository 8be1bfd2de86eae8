"""Fusion of several runs into one; ranks follow trec_eval's tie rule (`scoring.ordering`).

- RRF (Cormack et al., 2009): `sum_r w_r / (k + rank_r(s))`, absent skills add nothing, no `norm`.
- CombSUM (Fox & Shaw, 1993): `sum over runs r holding s of w_r * norm_r(s)`; CombMNZ: CombSUM
  times the number of runs holding s.
- `norm` per query and run: `minmax` (1 when all equal, the default), `zscore` with population
  sd (0 when all equal or sd is 0), `none`. Weights default to 1.

Output: the union of queries in byte order (empty rankings kept), each cut at `depth`; a fused
score adds contributions in the order runs were given. Runs streaming queries in ascending order
are sort-merged (memory: a chunk per run), others read whole; both give the same bytes.
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.runs import NotGrouped, OpenedRun, Run, RunChunk
from skillret.errors import ConfigError, InputError
from skillret.io.prefetch import prefetch
from skillret.io.readers import run_name
from skillret.io.write_runs import open_writer
from skillret.scoring.ordering import (argsort_by, byte_order_codes, group_starts, order_results,
                                       rank_order, ranks_within)


METHODS = ("rrf", "combsum", "combmnz")
NORMS = ("minmax", "zscore", "none")
DEFAULT_K = 60
DEFAULT_DEPTH = 100


@dataclass(frozen=True)
class Fusion:
    """Method and settings, checked on construction."""

    method: str = "rrf"
    k: float = DEFAULT_K
    norm: str | None = None
    weights: Mapping[str, float] = field(default_factory=dict)
    depth: int = DEFAULT_DEPTH

    def __post_init__(self):
        if self.method not in METHODS:
            raise ConfigError(f"unknown fusion method {self.method!r} "
                              f"(methods: {', '.join(METHODS)})")
        if self.method == "rrf":
            if self.norm is not None:
                raise ConfigError("rrf fuses ranks, not scores: it takes no norm")
        elif self.norm is None:
            object.__setattr__(self, "norm", "minmax")
        elif self.norm not in NORMS:
            raise ConfigError(f"unknown norm {self.norm!r} (norms: {', '.join(NORMS)})")
        if not _number(self.k) or not self.k > 0:
            raise ConfigError(f"k must be a number > 0, not {self.k!r}")
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 1:
            raise ConfigError(f"depth must be an integer >= 1, not {self.depth!r}")
        for name, weight in dict(self.weights).items():
            if not _number(weight):
                raise ConfigError(f"the weight of {name!r} must be a finite number, "
                                  f"not {weight!r}")

    def weight_vector(self, names: list[str]):
        """float64 weights of `names` (1 when not given); refuses a weight for another run."""
        unknown = sorted(set(self.weights) - set(names))
        if unknown:
            raise ConfigError(f"a weight for {', '.join(map(repr, unknown))}, which is not "
                              f"among the runs fused ({', '.join(names)})")
        return np.array([float(self.weights.get(n, 1.0)) for n in names], dtype=np.float64)

    def describe(self, names: list[str]) -> str:
        """E.g. `rrf (k=60, depth 100) of bm25 (w=2), dense` (weights of 1 not shown)."""
        what = f"k={self.k:g}" if self.method == "rrf" else f"norm={self.norm}"
        runs = [name if float(self.weights.get(name, 1.0)) == 1.0
                else f"{name} (w={float(self.weights[name]):g})" for name in names]
        return f"{self.method} ({what}, depth {self.depth}) of {', '.join(runs)}"


def _number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


@dataclass
class Ranked:
    """Fused results of whole queries, in rank order."""

    queries: pa.Array
    row_query: np.ndarray
    skill_id: pa.Array
    score: np.ndarray
    rank: np.ndarray
    distinct_skills: pa.Array | None = None   # a superset of the distinct skill ids


def fuse_chunks(chunk_lists: list[list], fusion: Fusion, names: list[str]) -> Ranked:
    """Each run's chunks (a list per run, a query in one chunk of a run), fused at once."""
    chunks = [c for chunks in chunk_lists for c in chunks]
    queries = pa.nulls(0, pa.string())
    if chunks:   # the union of queries in byte order (an empty chunked array imports pandas)
        queries = pc.unique(pa.chunked_array([c.queries for c in chunks], pa.string())
                            .combine_chunks())
        queries = arrow.take(queries, pc.array_sort_indices(queries))
    sizes = [len(c.score) for c in chunks]
    if not sum(sizes):
        empty = np.zeros(0, np.int64)
        return Ranked(queries, empty, pa.nulls(0, pa.string()), np.zeros(0), empty)
    run = np.repeat(np.repeat(np.arange(len(chunk_lists)), [len(c) for c in chunk_lists]), sizes)
    row_query = np.concatenate([arrow.to_numpy(pc.index_in(c.queries, queries))
                                .astype(np.int64)[c.row_query] for c in chunks])
    score = np.concatenate([c.score for c in chunks]).astype(np.float64, copy=False)
    skills = pa.chunked_array([c.skill_id for c in chunks], pa.string()).combine_chunks()

    block = group_starts(run * len(queries) + row_query)
    block_id = np.cumsum(block) - 1
    first = np.flatnonzero(block)
    if fusion.method == "rrf":
        perm, ranks = rank_order(block_id, score, skills)
        value = 1.0 / (fusion.k + ranks)   # in rank order, then back in row order
        if perm is not None:
            value[perm] = value.copy()
    else:
        value = normalise(score, first, block_id, fusion.norm)
    contribution = fusion.weight_vector(names)[run] * value

    # groups: one skill of one query over the runs; codes in byte order
    encoded = pc.dictionary_encode(skills)
    code = byte_order_codes(encoded)
    dictionary = arrow.take(encoded.dictionary, pc.array_sort_indices(encoded.dictionary))
    order = argsort_by((row_query, len(queries)), (code, len(dictionary)),
                       (run, len(chunk_lists)))
    group_query, group_code, run = row_query[order], code[order], run[order]
    starts = group_starts(group_query) | group_starts(group_code)
    _refuse_repeats(starts, run, group_query, group_code, queries, dictionary, names)
    first = np.flatnonzero(starts)
    fused = np.add.reduceat(contribution[order], first)
    if fusion.method == "combmnz":
        fused *= np.diff(np.append(first, len(order)))
    if not np.isfinite(fused).all():
        raise ConfigError("a fused score overflows a double: normalise the scores "
                          "(norm: minmax or zscore)")
    group_query, group_code = group_query[first], group_code[first]

    ranked = order_results(group_query, len(queries), fused)
    ranked_query = group_query[ranked]
    rank = ranks_within(group_starts(ranked_query))
    keep = rank <= fusion.depth
    rows = ranked[keep]
    return Ranked(queries, ranked_query[keep], arrow.take(dictionary, group_code[rows]),
                  fused[rows], rank[keep], dictionary)


def normalise(score: np.ndarray, first: np.ndarray, block_id: np.ndarray, norm: str
              ) -> np.ndarray:
    """Scores normalised per block (one run's ranking of one query)."""
    if norm == "none":
        return score
    low = np.minimum.reduceat(score, first)[block_id]
    high = np.maximum.reduceat(score, first)[block_id]
    equal = low == high
    if norm == "minmax":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(equal, 1.0, (score - low) / (high - low))
    count = np.diff(np.append(first, len(score)))
    mean = (np.add.reduceat(score, first) / count)[block_id]
    deviation = score - mean
    sd = np.sqrt(np.add.reduceat(deviation * deviation, first) / count)[block_id]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(equal | (sd == 0), 0.0, deviation / sd)


def _refuse_repeats(starts, run, query, code, queries, dictionary, names) -> None:
    """Refuse a skill twice in one run's ranking of a query (it would count twice)."""
    repeat = ~starts[1:] & (run[1:] == run[:-1])
    if repeat.any():
        at = int(np.flatnonzero(repeat)[0])
        raise InputError(names[int(run[at])], f"skill {dictionary[int(code[at])].as_py()!r} "
                         f"appears twice for query {queries[int(query[at])].as_py()!r}",
                         hint="each skill may appear once per query")


class Unsorted(Exception):
    """A run's queries are not ascending: it cannot be sort-merged."""


@dataclass
class Stream:
    """A run being read: chunks not yet fused, last query id read."""

    name: str
    chunks: Iterator
    pending: list = field(default_factory=list)
    last: str | None = None
    done: bool = False

    def pull(self) -> None:
        chunk = next(self.chunks, None)
        self.done = chunk is None
        if self.done or not len(chunk.queries):
            return
        queries = chunk.queries
        if (len(queries) > 1 and pc.any(pc.call_function(
                "less_equal", [queries[1:], queries[:-1]])).as_py()
                or self.last is not None and queries[0].as_py() <= self.last):
            raise Unsorted(self.name)
        self.last = queries[-1].as_py()
        self.pending.append(chunk)

    def take(self, upto: str | None) -> list:
        """Pending chunks up to query `upto` (all when None)."""
        ready = []
        while self.pending:
            chunk = self.pending[0]
            n = len(chunk.queries) if upto is None else int(pc.sum(pc.call_function(
                "less_equal", [chunk.queries, arrow.scalar(upto)])).as_py() or 0)
            if n == len(chunk.queries):
                ready.append(self.pending.pop(0))
                continue
            if n:
                cut = int(np.searchsorted(chunk.row_query, n))
                ready.append(RunChunk(chunk.queries[:n], chunk.row_query[:cut],
                                    chunk.skill_id[:cut], chunk.score[:cut]))
                self.pending[0] = RunChunk(chunk.queries[n:], chunk.row_query[cut:] - n,
                                         chunk.skill_id[cut:], chunk.score[cut:])
            break
        return ready


def merged(streams: list[Stream], fusion: Fusion, names: list[str]) -> Iterator[Ranked]:
    """Sort-merge on query id: a query is fused once every run has read past it (the last
    pass, every run done, fuses what is left)."""
    while not all(s.done for s in streams):
        behind = [s for s in streams if not s.done]
        min(behind, key=lambda s: (s.last is not None, s.last or "")).pull()
        behind = [s for s in streams if not s.done]
        if any(s.last is None for s in behind):
            continue
        upto = min(s.last for s in behind) if behind else None
        ranked = fuse_chunks([s.take(upto) for s in streams], fusion, names)
        if len(ranked.queries):
            yield ranked


def run_names(runs) -> tuple[list[str], list]:
    """Names and runs from a mapping, or from paths (named by `run_name`)."""
    if isinstance(runs, Mapping):
        names, values = [str(n) for n in runs], list(runs.values())
    else:
        values = list(runs)
        names = [run_name(v) if isinstance(v, (str, os.PathLike)) else f"run{i + 1}"
                 for i, v in enumerate(values)]
    if len(values) < 2:
        raise ConfigError("fusion needs at least two runs")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"two runs are named {repeated[0]!r}: name them (NAME=PATH)")
    return names, values


def fused_run(fusion: Fusion, runs: Mapping[str, OpenedRun]) -> Run:
    """`{name: run}` fused in memory into a `Run` with ranks."""
    ranked = _fuse_whole(fusion, runs)
    return Run.from_columns(arrow.take(ranked.queries, ranked.row_query), ranked.skill_id,
                            ranked.score, queries=ranked.queries, rank=ranked.rank)


def _fuse_whole(fusion: Fusion, runs: Mapping[str, OpenedRun]) -> Ranked:
    """Runs read whole (a file held to a streamed run's per-query limit), fused at once."""
    whole = [r.read() for r in runs.values()]
    return fuse_chunks([list(r.chunks()) for r in whole], fusion, list(runs))


def write_fusion(fusion: Fusion, runs: Mapping[str, OpenedRun], output: str | os.PathLike,
                 tmp: str | os.PathLike, *, tag: str,
                 notices: list[str] | None = None) -> dict:
    """Fuse `{name: run}` into `tmp` in `output`'s format; returns counts. Falls back (with a
    notice) to fusing in memory when a run cannot be sort-merged."""
    readers = [prefetch(source.chunks(), size=1) for source in runs.values()]
    try:
        streams = [Stream(n, r) for n, r in zip(runs, readers)]
        return _write(merged(streams, fusion, list(runs)), output, tmp, tag)
    except (Unsorted, NotGrouped) as exc:
        why = ("queries not in ascending id order" if isinstance(exc, Unsorted)
               else "a run's queries are not grouped")
        if notices is not None:
            notices.append(f"{exc}: {why}, so the runs were read into memory instead of "
                           "sort-merged")
    finally:  # no reader thread outlives the merge (one left at exit can crash it)
        for reader in readers:
            reader.close()
    return _write([_fuse_whole(fusion, runs)], output, tmp, tag)


def _write(batches: Iterable[Ranked], output, tmp, tag: str) -> dict:
    counts = {"queries": 0, "rows": 0}
    with contextlib.closing(open_writer(output, tmp, tag=tag)) as writer:
        for ranked in batches:
            writer.write(ranked.queries, ranked.row_query, ranked.skill_id, ranked.score,
                         ranked.rank, distinct_skills=ranked.distinct_skills)
            counts["queries"] += len(ranked.queries)
            counts["rows"] += len(ranked.score)
    return counts
