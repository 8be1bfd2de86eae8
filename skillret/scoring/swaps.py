"""Swapped score and rank columns (``qid Q0 skill score rank tag``, a common export bug): the
run reads without an error, but sorting by its "scores" 1, 2, 3, ... reverses every ranking.

Three signs: scores that run 1, 2, 3, ... (or 0, 1, ...) down each query's rows (``rank_like``,
seen without a rank column too); a rank column holding non-integers; file ranks going down in
score order in most queries (``reversed``). :class:`SwapTally` counts them chunk by chunk;
:func:`swap_warning` words the warning, with how to swap the columns back.
"""

from __future__ import annotations

from dataclasses import dataclass
import numpy as np


@dataclass
class SwapTally:
    """The signs of swapped score and rank columns, over the chunks seen."""

    queries: int = 0             # queries with two results or more
    rank_like: int = 0           # of them, scores 1, 2, 3, ... down the file's rows
    first_rank_like_line: int | None = None
    ranked_queries: int = 0      # queries with two results or more and integer ranks
    reversed: int = 0            # of them, file ranks going down in score order
    fractional: int = 0          # rows whose rank is not an integer
    fractional_example: float | None = None
    first_fractional_line: int | None = None

    def add(self, chunk, order: np.ndarray | None = None) -> None:
        """Count the signs of one chunk. ``order``: its rows in score order (the tie rule's),
        when the caller has it; without it the rank column's direction is not looked at."""
        if len(chunk.score) < 2:
            return
        row_query = chunk.row_query
        nq = len(chunk.queries)
        counts = np.bincount(row_query, minlength=nq)
        several = counts >= 2
        self.queries += int(several.sum())
        first = np.cumsum(counts) - counts
        position = np.arange(len(row_query)) - first[row_query]
        start = chunk.score[np.minimum(first, len(row_query) - 1)]  # any, for a query without rows
        fits = chunk.score - position == start[row_query]
        misfits = np.bincount(row_query, weights=~fits, minlength=nq)
        like = several & (misfits == 0) & ((start == 0) | (start == 1))
        if like.any():
            self.rank_like += int(like.sum())
            if self.first_rank_like_line is None and chunk.line is not None:
                self.first_rank_like_line = int(chunk.line[first[np.flatnonzero(like)[0]]])
        if chunk.rank is None:
            return
        rank = np.asarray(chunk.rank)
        bad = _not_integers(rank)
        if len(bad):
            self.fractional += len(bad)
            if self.fractional_example is None:
                self.fractional_example = float(rank[bad[0]])
                if chunk.line is not None:
                    self.first_fractional_line = int(chunk.line[bad].min())
            return
        if order is None:
            return
        q = row_query[order]
        file_rank = rank[order]
        same = q[1:] == q[:-1]
        step = np.sign(file_rank[1:] - file_rank[:-1]) * same
        down = np.bincount(q[1:], weights=step < 0, minlength=nq)
        up = np.bincount(q[1:], weights=step > 0, minlength=nq)
        self.ranked_queries += int(several.sum())
        self.reversed += int((several & (down > up)).sum())

    @property
    def swapped(self) -> bool:
        """Do the signs say swapped? Fractional ranks, or rank-like scores or reversed ranks in
        most queries."""
        return bool(self.fractional or (self.queries and 2 * self.rank_like > self.queries)
                    or (self.ranked_queries and 2 * self.reversed > self.ranked_queries))

    def as_dict(self) -> dict:
        return {"suspected": self.swapped, "rank_like_queries": self.rank_like,
                "queries": self.queries, "reversed_queries": self.reversed,
                "fractional_ranks": self.fractional}


def _not_integers(rank: np.ndarray) -> np.ndarray:
    """The rows of a rank column (int64 or float64) that hold a number that is not an integer."""
    return np.flatnonzero(~(np.isfinite(rank) & (rank == np.round(rank))))


def integral_ranks(rank: np.ndarray | None) -> np.ndarray | None:
    """A rank column as int64, or None when it is absent or holds a number that is not an
    integer (then it is no rank: the signs above say what it may be)."""
    return None if rank is None or len(_not_integers(rank)) else rank.astype(np.int64, copy=False)


def swap_warning(tally: SwapTally, source: str | None, fmt: str | None) -> str | None:
    """The warning for swapped score and rank columns, or for scores that order the results
    against the rank column (None when the columns look right):
    ``path:line: <what>: <signs>; <consequence> (<fix>)``."""
    if not tally.swapped:
        return None
    trec = fmt == "trec"
    score_col = "the score column (field 5)" if trec else "the score column"
    rank_col = "the rank column (field 4)" if trec else "the rank column"
    where = source or "<run>"
    lines = [n for n in (tally.first_fractional_line, tally.first_rank_like_line)
             if n is not None]
    if lines:  # the first line that shows it
        where += f":{min(lines)}"
    consequence = ("results are ordered by score, highest first, so these rankings are scored "
                   "reversed")
    if not (tally.fractional or 2 * tally.rank_like > tally.queries):
        example = f", e.g. {_command(source, NEGATE)}" if trec else ""
        return (f"{where}: {score_col} orders the results against {rank_col}: ordered by "
                f"score, {tally.reversed:,} of {tally.ranked_queries:,} queries have ranks "
                f"going down; {consequence} (if lower scores are better here (distances), give "
                f"-score as the score{example}; if the ranks are wrong instead, nothing "
                f"changes: ranks are ignored)")
    signs = []
    if tally.fractional:
        signs.append(f"{rank_col} holds numbers that are not integers on {tally.fractional:,} "
                     f"row{'s' if tally.fractional != 1 else ''} (e.g. "
                     f"{tally.fractional_example:.6g})")
    if tally.rank_like:
        signs.append(f"{score_col} holds 1, 2, 3, ... down the ranking of {tally.rank_like:,} "
                     f"of {tally.queries:,} queries, as ranks do")
    head = "the score and rank columns look swapped" if trec or tally.fractional or \
        tally.reversed else "the scores look like ranks"
    fix = "scores must be higher for better results: give the scores, or -rank as the score"
    if trec:  # how to swap them back, for the format at hand
        fix = ("a TREC run is qid Q0 skill_id rank score tag: swap fields 4 and 5, e.g. "
               + _command(source, "awk '{t=$4; $4=$5; $5=t} 1'"))
    elif fmt in ("csv", "tsv", "jsonl", "parquet") and source:
        fix = ("if the columns are named the other way round, say which is which, e.g. "
               "--columns score=NAME,rank=NAME; scores must be higher for better results "
               "(a rank r can be given as score -r)")
    return f"{where}: {head}: {'; '.join(signs)}; {consequence} ({fix})"


#: Negates field 5 as text (awk's arithmetic would print 6 significant digits).
NEGATE = "awk '{$5 = $5 ~ /^-/ ? substr($5, 2) : \"-\" $5} 1'"


def _command(source: str | None, program: str) -> str:
    path = source or "run.trec"
    if path.lower().endswith(".gz"):
        return f"zcat {path} | {program} > fixed.trec"
    return f"{program} {path} > fixed.trec"
