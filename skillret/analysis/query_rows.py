"""The rows of a run kept as it is scored, and the rankings of a few queries read off them.

`skillret-eval queries` needs every query's metric (to choose the largest losses and gains)
but the ranked skills of the chosen queries only, which are known once both runs are scored.
So each run file is scored as it streams (as `score` reads it: no whole-run copy, no hash of
every row's query id), and `KeptRows` watches the chunks go by and keeps what a ranking
needs of them: each chunk's queries, the row-to-query positions, skill ids and scores, as the
reader made them (nothing is copied). `KeptRows.rankings` then finds the chosen queries
among each chunk's queries and ranks their rows only.

The rankings are `skillret.analysis.queries.rankings`' (which ranks a run held as whole
columns, as the pipeline's canonical runs are): same tie rule, same `[]` for a query the run
lacks. `tests/analysis/test_query_rows.py` holds the two to the same answers.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skillret.columnar import arrow
from skillret.columnar.runs import RunChunk
from skillret.columnar.strings import as_string_array
from skillret.scoring.ordering import group_starts, rank_order


class KeptRows:
    """A run's rows, kept chunk by chunk: pass `watch` to the scorer (`watch=`), then
    ask `rankings`."""

    def __init__(self) -> None:
        self._parts: list[tuple[pa.Array, np.ndarray, pa.Array, np.ndarray]] = []

    def watch(self, chunks: Iterable[RunChunk]) -> Iterator[RunChunk]:
        """The chunks, passed on as they come, each kept. Called again (a file whose queries
        turn out not to be grouped is read again whole), it starts over."""
        self._parts = []
        for chunk in chunks:
            self._parts.append((chunk.queries, chunk.row_query, chunk.skill_id, chunk.score))
            yield chunk

    @classmethod
    def of_table(cls, table: pa.Table) -> KeptRows:
        """A whole run held as a table (query_id, skill_id, score) whose query ids are
        dictionary-encoded, as a canonical run read with `read_dictionary` is: each batch's
        dictionary and indices are what a scored chunk's `queries` and `row_query` are, so
        no id is decoded but the wanted queries' skills."""
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
        """`{query: skill ids in rank order}` for the `wanted` queries; a wanted query the
        run lacks maps to `[]`."""
        out: dict[str, list[str]] = {q: [] for q in wanted}
        if not wanted:
            return out
        value_set = arrow.strings(list(wanted))
        owners, skills, scores = [], [], []
        for queries, row_query, skill_id, score in self._parts:
            owner = _wanted_rows(queries, row_query, value_set)
            if owner is None:
                continue
            rows = np.flatnonzero(owner >= 0)
            owners.append(owner[rows])
            skills.append(as_string_array(arrow.take(skill_id, rows)))
            scores.append(np.asarray(score, dtype=np.float64)[rows])
        if not owners:
            return out
        owner = np.concatenate(owners)
        order = np.argsort(owner, kind="stable")  # a query's rows together, in run order
        owner = owner[order]
        ids = arrow.take(pa.concat_arrays(skills) if len(skills) > 1 else skills[0], order)
        perm, _ = rank_order(owner, np.concatenate(scores)[order], ids)
        if perm is not None:
            owner, ids = owner[perm], arrow.take(ids, perm)
        names = ids.to_pylist()
        starts = np.flatnonzero(group_starts(owner))
        for start, stop in zip(starts.tolist(), np.append(starts[1:], len(owner)).tolist()):
            out[wanted[int(owner[start])]] = names[start:stop]
        return out


def _wanted_rows(queries: pa.Array, row_query: np.ndarray,
                 value_set: pa.Array) -> np.ndarray | None:
    """Per row of a chunk, the position of its query among the wanted (-1: not wanted); None
    when the chunk holds no wanted query's rows."""
    if not len(row_query):
        return None
    position = pc.index_in(queries, value_set=value_set)
    found = arrow.to_numpy(pc.is_valid(position))
    if not found.any():
        return None
    of_query = np.full(len(queries), -1, dtype=np.int64)
    of_query[found] = arrow.to_numpy(arrow.filter(position, found))
    return of_query[row_query]


__all__ = ["KeptRows"]
