"""How `queries` ranks the chosen queries (`KeptRows`), held to a plain-Python statement of the
tie rule on generated runs: the rows kept as a run file streams through scoring (what `queries`
does with run files) and a run held whole as a table (the pipeline's canonical runs).

Runs come with tied scores (also ties only at 32-bit precision), in score order or not, grouped
by query or not (a file whose queries are not grouped is read again whole: the kept rows must
start over), read in blocks of a few lines; the whole command's output is compared too.
"""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from skillret.analysis import queries
from skillret.analysis.queries import KeptRows
from skillret.api import per_query_values
from skillret.cli import compare as cli_queries
from skillret.cli import main
from skillret.io.readers import open_run, read_qrels
from skillret.render.compare import render_queries as render

QUERIES = [f"q{i}" for i in range(6)]
SKILLS = ["a", "b", "bb", "c", "d", "e", "f", "g"]
#: Scores that tie, some only as 32-bit floats (1.0 and 1.0000000001).
SCORES = [0.0, 0.5, 1.0, 1.0000000001, 2.0, -1.5]


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def tie_rule(rows: list[tuple[str, float]]) -> list[str]:
    """Skills by score descending as 32-bit floats, then skill id descending in byte order."""
    by_id = sorted(rows, key=lambda r: r[0].encode(), reverse=True)
    return [s for s, _ in sorted(by_id, key=lambda r: -f32(r[1]))]


@st.composite
def runs(draw):
    """(rows of a run: (query, skill, score), in file order)."""
    rows = []
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=5, unique=True)):
        skills = draw(st.lists(st.sampled_from(SKILLS), min_size=1, max_size=6, unique=True))
        rows += [(q, s, draw(st.sampled_from(SCORES))) for s in skills]
    how = draw(st.sampled_from(["by score", "as drawn", "shuffled"]))
    if how == "by score":  # grouped by query, best first, as a retriever writes it
        rows.sort(key=lambda r: (r[0], -r[2]))
    elif how == "shuffled":  # queries not grouped, most likely
        rows = draw(st.permutations(rows))
    return rows


@st.composite
def judgments(draw):
    pairs = draw(st.lists(st.tuples(st.sampled_from(QUERIES), st.sampled_from(SKILLS),
                                    st.integers(0, 2)), min_size=1, max_size=12,
                          unique_by=lambda j: j[:2]))
    return sorted(pairs)


def write_run(path: Path, rows) -> None:
    path.write_text("".join(f"{q} Q0 {s} {i} {score!r} t\n"
                            for i, (q, s, score) in enumerate(rows, 1)))


def write_qrels(path: Path, pairs, *runs_rows) -> None:
    """The judgments, and one more for a query of each run (so that each overlaps them)."""
    pairs = sorted(set(pairs) | {(rows[0][0], "zz", 1) for rows in runs_rows})
    path.write_text("".join(f"{q} 0 {s} {g}\n" for q, s, g in pairs))


def kept_rankings(qrels, path: Path, block_size: int, wanted, metric="NDCG@3"):
    kept = KeptRows()
    per_query_values(qrels, open_run(path, block_size=block_size), [metric], str(path),
                     watch=kept.watch)
    return kept.rankings(wanted)


@settings(max_examples=examples(200), deadline=None)
@given(rows=runs(), pairs=judgments(), block_lines=st.integers(1, 8),
       wanted=st.lists(st.sampled_from(QUERIES + ["missing"]), unique=True, max_size=7))
def test_kept_rows_rank_as_whole_columns_and_as_the_tie_rule(rows, pairs, block_lines, wanted):
    with tempfile.TemporaryDirectory() as tmp:
        run_path, qrels_path = Path(tmp) / "run.trec", Path(tmp) / "qrels.txt"
        write_run(run_path, rows)
        write_qrels(qrels_path, pairs, rows)
        qrels = read_qrels(qrels_path)
        streamed = kept_rankings(qrels, run_path, 24 * block_lines, wanted)
        held = KeptRows.of_table(whole_table(open_run(run_path).read())).rankings(wanted)
    expected = {q: tie_rule([(s, score) for rq, s, score in rows if rq == q]) for q in wanted}
    assert streamed == held == expected
    assert list(streamed) == wanted


@settings(max_examples=examples(60), deadline=None)
@given(a=runs(), b=runs(), pairs=judgments(), block_lines=st.integers(1, 8),
       metric=st.sampled_from(["NDCG@3", "Recall@2", "MRR@1", "Precision(rel=2)@3"]),
       worst=st.integers(0, 3), best=st.integers(0, 3))
def test_the_command_shows_what_whole_columns_give(a, b, pairs, block_lines, metric, worst,
                                                   best):
    """``queries`` on two run files (streamed, rows kept) prints what scoring the runs read
    whole and ranking them as columns gives, in every format."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_run(d / "a.trec", a)
        write_run(d / "b.trec", b)
        write_qrels(d / "qrels.txt", pairs, a, b)
        qrels = read_qrels(d / "qrels.txt")
        sides = []
        for name in ("a", "b"):
            whole = open_run(d / f"{name}.trec").read()
            sides.append((per_query_values(qrels, whole, [metric], name),
                          KeptRows.of_table(whole_table(whole))))
        (table_a, run_a), (table_b, run_b) = sides
        selected = queries.select(table_a, table_b, metric, worst=worst, best=best)
        wanted = selected.chosen()
        report = queries.explain(selected, qrels, run_a.rankings(wanted),
                                 run_b.rankings(wanted), label_a="a", label_b="b")
        for fmt in ("terminal", "markdown", "json"):
            out = d / f"out.{fmt}"
            status = command(block_lines, ["queries", "--qrels", str(d / "qrels.txt"), "--run",
                           f"a={d / 'a.trec'}", "--run", f"b={d / 'b.trec'}", "--metric",
                           metric, "--worst", str(worst), "--best", str(best), "--format", fmt,
                           "-o", str(out)])
            assert status == 0
            assert out.read_text() == render(report, fmt)


def whole_table(run):
    """A run read whole, as the table of its query_id, skill_id and score columns."""
    import pyarrow as pa

    return pa.table({"query_id": run.query_id, "skill_id": run.skill_id, "score": run.score})


def command(block_lines: int, argv: list[str]) -> int:
    """``skillret-eval ARGV``, reading TREC runs a few lines at a time."""
    saved = cli_queries.BLOCK_SIZE
    cli_queries.BLOCK_SIZE = 24 * block_lines
    try:
        return main(argv)
    finally:
        cli_queries.BLOCK_SIZE = saved


@settings(max_examples=examples(150), deadline=None)
@given(rows=runs(), wanted=st.lists(st.sampled_from(QUERIES + ["absent"]), min_size=1,
                                    max_size=4, unique=True),
       empty=st.booleans(), batch=st.integers(1, 7))
def test_a_canonical_table_ranks_as_whole_columns(rows, wanted, empty, batch):
    """KeptRows.of_table (the compare stage's query reports, a canonical run read with its ids
    as dictionaries, in several batches) against the same table plain; an empty
    ranking is a row with a null skill and score, as the canonical run writes it."""
    import pyarrow as pa

    if empty:
        rows = rows + [("q5", None, None)] if all(r[0] != "q5" for r in rows) else rows
    table = pa.table({"query_id": [r[0] for r in rows], "skill_id": [r[1] for r in rows],
                      "score": pa.array([r[2] for r in rows], type=pa.float64())})
    plain = KeptRows.of_table(table).rankings(wanted)
    encoded = pa.Table.from_batches([
        pa.record_batch([part.column(0).dictionary_encode(), part.column(1).dictionary_encode(),
                         part.column(2)], names=table.column_names)
        for part in table.to_batches(max_chunksize=batch)])
    assert KeptRows.of_table(encoded).rankings(wanted) == plain
    if empty and "q5" in wanted and all(r[0] != "q5" or r[1] is None for r in rows):
        assert plain["q5"] == []                        # retrieved nothing: no skill ranked
