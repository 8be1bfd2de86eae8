"""Fusion: one ranked run from several, by RRF, CombSUM or CombMNZ.

Definitions (a run's ranks and every order below follow trec_eval's tie rule, the one
:mod:`skillret.scoring.ordering` implements: score descending compared as 32-bit floats, equal scores
broken by skill id descending in byte order; ranks are 1-based):

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

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.errors import ConfigError, InputError
from skillret.scoring.ordering import (byte_order_codes, group_starts, rank_order, ranks_within,
                                       trec_scores)
from skillret.io.prefetch import prefetch
from skillret.columnar.runs import NotGrouped

METHODS = ("rrf", "combsum", "combmnz")
NORMS = ("minmax", "zscore", "none")
DEFAULT_K = 60
DEFAULT_DEPTH = 100


@dataclass(frozen=True)
class Fusion:
    """How to fuse: the method and its settings, checked on construction."""

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

    def weight_vector(self, names: list[str]) -> np.ndarray:
        unknown = sorted(set(self.weights) - set(names))
        if unknown:
            raise ConfigError(f"a weight for {', '.join(map(repr, unknown))}, which is not "
                              f"among the runs fused ({', '.join(names)})")
        return np.array([float(self.weights.get(n, 1.0)) for n in names], dtype=np.float64)


def _number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


# ---------------------------------------------------------------------------- the kernel
@dataclass
class Part:
    """One run's rows for a set of queries: grouped by query (each query's rows together)."""

    row_query: np.ndarray      # int64, position of the row's query in the batch's queries
    skill_id: pa.Array
    score: np.ndarray          # float64


@dataclass
class Ranked:
    """Fused results of whole queries, in rank order (see :mod:`skillret.io.write_runs`)."""

    queries: pa.Array
    row_query: np.ndarray
    skill_id: pa.Array
    score: np.ndarray
    rank: np.ndarray
    distinct_skills: pa.Array | None = None   # a superset of the distinct skill ids

    def __len__(self) -> int:
        return len(self.score)


def fuse_parts(queries: pa.Array, parts: list[Part], fusion: Fusion, weights: np.ndarray,
               names: list[str]) -> Ranked:
    """Fuse the runs' rows for ``queries`` (every query once); vectorized over all rows."""
    sizes = [len(p.score) for p in parts]
    run = np.repeat(np.arange(len(parts)), sizes)
    row_query = np.concatenate([p.row_query for p in parts]).astype(np.int64, copy=False)
    score = np.concatenate([p.score for p in parts]).astype(np.float64, copy=False)
    if not len(score):
        empty = np.zeros(0, np.int64)
        return Ranked(queries, empty, arrow.empty(pa.string()), np.zeros(0), empty)
    skills = pa.chunked_array([p.skill_id for p in parts], pa.string()).combine_chunks()

    # blocks: one run's ranking of one query
    block = group_starts(run * len(queries) + row_query)
    block_id = np.cumsum(block) - 1
    first = np.flatnonzero(block)
    if fusion.method == "rrf":
        perm, ranks = rank_order(block_id, score, skills)
        rank = ranks if perm is None else np.empty_like(ranks)
        if perm is not None:
            rank[perm] = ranks
        value = 1.0 / (fusion.k + rank)
    else:
        value = normalise(score, first, block_id, fusion.norm)
    contribution = weights[run] * value

    # groups: one skill of one query, over the runs; skill codes follow the ids' byte order
    encoded = pc.dictionary_encode(skills)
    code = byte_order_codes(encoded)
    dictionary = arrow.take(encoded.dictionary, pc.array_sort_indices(encoded.dictionary))
    order = argsort_by((row_query, len(queries)), (code, len(dictionary)), (run, len(parts)))
    group_query, group_code, run = row_query[order], code[order], run[order]
    starts = group_starts(group_query) | group_starts(group_code)
    _refuse_repeats(starts, run, group_query, group_code, queries, dictionary, names)
    first = np.flatnonzero(starts)            # runs in the order given within each group
    fused = np.add.reduceat(contribution[order], first)
    if fusion.method == "combmnz":
        fused *= np.diff(np.append(first, len(order)))
    if not np.isfinite(fused).all():
        raise ConfigError("a fused score overflows a double: normalise the scores "
                          "(norm: minmax or zscore)")
    group_query, group_code = group_query[first], group_code[first]

    # fused ranking: score (as trec_eval compares it), then skill id, descending; cut at depth
    ranked = order_results(group_query, len(queries), fused)
    ranked_query = group_query[ranked]
    rank = ranks_within(group_starts(ranked_query))
    keep = rank <= fusion.depth
    rows = ranked[keep]
    return Ranked(queries, ranked_query[keep], arrow.take(dictionary, group_code[rows]),
                  fused[rows], rank[keep], dictionary)


def order_results(query: np.ndarray, n_queries: int, score: np.ndarray) -> np.ndarray:
    """The order of results grouped by query (non-decreasing ``query``), each query's in skill
    id order: by query, then score descending as trec_eval compares scores (32-bit floats),
    then skill id descending.

    (query, score bits, position in the query) packs into one int64 that tells every result
    apart and gives its row back, so numpy sorts values rather than argsorting them.
    """
    starts = group_starts(query)
    position = ranks_within(starts) - 1             # within the query, in skill id order
    slots = int(position.max()) + 1 if len(position) else 1
    if n_queries * slots >= 1 << 31:
        return argsort_by((query, n_queries), (descending_float32(score), 1 << 32),
                          (slots - 1 - position, slots))
    key = query << 32
    key += descending_float32(score)
    key *= slots
    key += slots - 1 - position
    key.sort()
    first = np.zeros(n_queries, dtype=np.int64)
    first[query[starts]] = np.flatnonzero(starts)
    return first[key // (slots << 32)] + (slots - 1 - key % slots)


def argsort_by(*keys: tuple[np.ndarray, int]) -> np.ndarray:
    """The order of rows by several keys, most significant first, each given as (values in
    ``[0, size)``, size); together the keys must tell every row apart.

    The keys are packed into one int64 with the row number in the low bits and sorted as values
    (numpy sorts values about twice as fast as it argsorts them); when they do not fit in 63
    bits, an argsort of the packed key, or numpy's lexsort.
    """
    n = len(keys[0][0])
    total = 1
    for _, size in keys:
        total *= max(int(size), 1)
    if total >= 1 << 63:
        return np.lexsort([values for values, _ in reversed(keys)])
    combined = np.zeros(n, dtype=np.int64)
    for values, size in keys:
        combined *= max(int(size), 1)
        combined += values
    row_bits = max(n - 1, 1).bit_length()
    if total << row_bits >= 1 << 63:
        return np.argsort(combined)
    combined <<= row_bits
    combined |= np.arange(n, dtype=np.int64)
    combined.sort()
    return combined & ((1 << row_bits) - 1)


def descending_float32(values: np.ndarray) -> np.ndarray:
    """int64 in [0, 2**32): ascending as the values compared as 32-bit floats descend (the
    comparison trec_eval makes; -0 and +0 are equal)."""
    bits = (trec_scores(values) + np.float32(0)).view(np.uint32).astype(np.int64)
    ascending = np.where(bits >= 1 << 31, (1 << 32) - 1 - bits, bits + (1 << 31))
    return (1 << 32) - 1 - ascending


def normalise(score: np.ndarray, first: np.ndarray, block_id: np.ndarray, norm: str
              ) -> np.ndarray:
    """Scores normalised per block (one run's ranking of one query); see the module doc."""
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
    """A skill twice in one run's ranking of a query would count twice: refused."""
    repeat = ~starts[1:] & (run[1:] == run[:-1])
    if repeat.any():
        at = int(np.flatnonzero(repeat)[0])
        raise InputError(names[int(run[at])], f"skill {dictionary[int(code[at])].as_py()!r} "
                         f"appears twice for query {queries[int(query[at])].as_py()!r}",
                         hint="each skill may appear once per query")


# ---------------------------------------------------------------------------- reading runs
def query_chunks(path: str | os.PathLike) -> Iterator:
    """A run file as chunks of whole queries (:meth:`skillret.io.RunSource.chunks`: streamed
    when its format allows)."""
    import skillret
    return skillret.open_run(path).chunks()


def _loaded(run) -> "skillret.Run":  # noqa: F821
    import skillret
    if isinstance(run, (str, os.PathLike)):
        return skillret.open_run(run).read()
    if isinstance(run, dict):
        return skillret.Run.from_dict(run)
    if isinstance(run, skillret.Run):
        return run
    raise TypeError(f"a run to fuse is a path, a {{query: {{skill: score}}}} dict or a Run, "
                    f"not {type(run).__name__}")


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
    """``runs/bm25.trec.gz`` -> ``bm25``."""
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


# ---------------------------------------------------------------------------- the routes
def fuse(runs, *, method: str = "rrf", k: float = DEFAULT_K, norm: str | None = None,
         weights: Mapping[str, float] | None = None, depth: int = DEFAULT_DEPTH):
    """Fuse runs in memory; returns a :class:`skillret.Run` (with its rank column).

    ``runs``: ``{name: run}`` or a list of runs; a run is a path (any readable format), a
    ``{query: {skill: score}}`` dict or a :class:`skillret.Run`. Paths are named by file stem.

        >>> skillret.analysis.fusion.fuse(["bm25.trec", "dense.trec"], method="rrf")
    """
    import skillret
    fusion = Fusion(method, k, norm, dict(weights or {}), depth)
    names, values = run_names(runs)
    weight = fusion.weight_vector(names)
    ranked = _fuse_loaded([_loaded(v) for v in values], fusion, weight, names)
    return skillret.Run.from_columns(arrow.take(ranked.queries, ranked.row_query), ranked.skill_id,
                                     ranked.score, queries=ranked.queries, rank=ranked.rank)


def _fuse_loaded(loaded: list, fusion: Fusion, weights: np.ndarray, names: list[str]) -> Ranked:
    """Every run whole: one kernel call over the union of their queries."""
    chunk_lists = [list(run.chunks()) for run in loaded]
    every = [c.queries for chunks in chunk_lists for c in chunks]
    queries = _sorted_unique(every)
    parts = [_part(chunks, queries) for chunks in chunk_lists]
    return fuse_parts(queries, parts, fusion, weights, names)


def _sorted_unique(arrays: list[pa.Array]) -> pa.Array:
    if not arrays:
        return arrow.empty(pa.string())
    values = pc.unique(pa.chunked_array(arrays, pa.string()).combine_chunks())
    return arrow.take(values, pc.array_sort_indices(values))


def _part(chunks: list, queries: pa.Array) -> Part:
    """Chunks of one run as a Part over ``queries`` (rows stay grouped by query)."""
    if not chunks:
        return Part(np.zeros(0, np.int64), arrow.empty(pa.string()), np.zeros(0))
    row_query = [arrow.to_numpy(pc.index_in(c.queries, queries)).astype(np.int64)[c.row_query]
                 for c in chunks]
    return Part(np.concatenate(row_query),
                pa.chunked_array([c.skill_id for c in chunks], pa.string()).combine_chunks(),
                np.concatenate([c.score for c in chunks]))


class _Unsorted(Exception):
    """A run's queries are not in ascending id order: it cannot be sort-merged."""


@dataclass
class _Stream:
    """One run being read: chunks not yet fused, and the last query id read."""

    name: str
    chunks: Iterator
    pending: list = field(default_factory=list)
    last: str | None = None
    done: bool = False

    def pull(self) -> None:
        chunk = next(self.chunks, None)
        if chunk is None:
            self.done = True
            return
        queries = chunk.queries
        if not len(queries):
            return
        if len(queries) > 1 and pc.any(pc.call_function(
                "less_equal", [queries[1:], queries[:-1]])).as_py():
            raise _Unsorted(self.name)
        if self.last is not None and queries[0].as_py() <= self.last:
            raise _Unsorted(self.name)
        self.last = queries[-1].as_py()
        self.pending.append(chunk)

    def take(self, upto: str | None) -> list:
        """Split off the pending queries up to ``upto`` (all when None), as chunks."""
        if upto is None:
            ready, self.pending = self.pending, []
            return ready
        ready = []
        while self.pending:
            chunk = self.pending[0]
            n = int(pc.sum(pc.call_function("less_equal", [chunk.queries, arrow.scalar(upto)]))
                    .as_py() or 0)
            if n == len(chunk.queries):
                ready.append(self.pending.pop(0))
                continue
            if n:
                cut = int(np.searchsorted(chunk.row_query, n))
                ready.append(_Piece(chunk.queries[:n], chunk.row_query[:cut],
                                    chunk.skill_id[:cut], chunk.score[:cut]))
                self.pending[0] = _Piece(chunk.queries[n:], chunk.row_query[cut:] - n,
                                         chunk.skill_id[cut:], chunk.score[cut:])
            break
        return ready


@dataclass
class _Piece:
    queries: pa.Array
    row_query: np.ndarray
    skill_id: pa.Array
    score: np.ndarray


def merged(streams: list[_Stream], fusion: Fusion, weights: np.ndarray, names: list[str]
           ) -> Iterator[Ranked]:
    """Sort-merge the streams on the query id: fuse a query once every run has read past it."""
    while not all(s.done for s in streams):
        behind = [s for s in streams if not s.done]
        min(behind, key=lambda s: (s.last is not None, s.last or "")).pull()
        behind = [s for s in streams if not s.done]
        if any(s.last is None for s in behind):
            continue
        upto = min(s.last for s in behind) if behind else None
        ranked = _fuse_ready(streams, upto, fusion, weights, names)
        if ranked is not None:
            yield ranked
    ranked = _fuse_ready(streams, None, fusion, weights, names)
    if ranked is not None:
        yield ranked


def _fuse_ready(streams, upto, fusion, weights, names) -> Ranked | None:
    ready = [s.take(upto) for s in streams]
    queries = _sorted_unique([c.queries for chunks in ready for c in chunks])
    if not len(queries):
        return None
    return fuse_parts(queries, [_part(chunks, queries) for chunks in ready], fusion, weights,
                      names)


def fuse_to_file(runs, output: str | os.PathLike, *, method: str = "rrf",
                 k: float = DEFAULT_K, norm: str | None = None,
                 weights: Mapping[str, float] | None = None, depth: int = DEFAULT_DEPTH,
                 tag: str | None = None, notices: list[str] | None = None,
                 atomic: bool = True) -> dict:
    """Fuse run files into ``output`` (format by extension), atomically; returns counts.

    ``runs``: ``{name: path}`` or a list of paths (named by file stem). Streams when it can
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
        if not os.path.exists(path):
            raise InputError(path, "no such run file")
    tag = tag or run_stem(output)
    counts = {"queries": 0, "empty": 0, "rows": 0}
    with (atomic_path(output) if atomic else contextlib.nullcontext(output)) as tmp:
        readers = [prefetch(query_chunks(p), size=1) for p in paths]
        try:
            streams = [_Stream(n, r) for n, r in zip(names, readers)]
            counts = _write(merged(streams, fusion, weight, names), output, tmp, tag)
            counts["merged"] = True
        except _Unsorted as exc:
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
            counts = _write([_fuse_loaded(loaded, fusion, weight, names)], output, tmp, tag)
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
