"""The fusion methods' kernel, which fuses the runs' rows for a set of whole queries
(`fuse_parts`); their settings (`Fusion`: RRF, CombSUM, CombMNZ, norms, weights,
depth) are in `skillret.analysis.fusion_spec`, the definitions in
`skillret.analysis.fusion`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.analysis.fusion_spec import Fusion
from skillret.columnar import arrow
from skillret.errors import ConfigError, InputError
from skillret.scoring.ordering import (argsort_by, byte_order_codes, group_starts, order_results,
                                       rank_order, ranks_within)


@dataclass
class Part:
    """One run's rows for a set of queries: grouped by query (each query's rows together)."""

    row_query: np.ndarray      # int64, position of the row's query in the batch's queries
    skill_id: pa.Array
    score: np.ndarray          # float64


@dataclass
class Ranked:
    """Fused results of whole queries, in rank order (see `skillret.io.write_runs`)."""

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
    """Fuse the runs' rows for `queries` (every query once); vectorized over all rows."""
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


__all__ = ["Part", "Ranked", "fuse_parts", "normalise"]
