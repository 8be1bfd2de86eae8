"""`skillret-eval queries`: which queries changed most, and where their needed skills ranked.
Every expected value here is worked out by hand from the small runs below."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from skillret.analysis import queries
from skillret.io.per_query import PerQuery
from skillret.cli import main
from skillret.columnar.qrels import Qrels
from skillret.io.readers import read_qrels

QRELS = """q1 0 alpha 2
q1 0 beta 1
q1 0 junk 0
q2 0 gamma 1
q3 0 delta 1
"""
# run A ranks every needed skill first; run B pushes them down or drops them.
RUN_A = """q1 Q0 alpha 1 9 A
q1 Q0 beta 2 8 A
q1 Q0 x1 3 7 A
q2 Q0 gamma 1 5 A
q2 Q0 y1 2 4 A
q3 Q0 z1 1 3 A
q3 Q0 delta 2 2 A
"""
RUN_B = """q1 Q0 x1 1 9 B
q1 Q0 junk 2 8 B
q1 Q0 alpha 3 8 B
q1 Q0 x2 4 1 B
q2 Q0 gamma 1 5 B
q3 Q0 delta 1 3 B
q3 Q0 z1 2 1 B
"""
# B's q1: x1 (9), then junk and alpha tie at 8: skill id descending puts junk (j > a) first.
# beta is not retrieved by B.


def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.trec").write_text(RUN_A)
    (tmp_path / "b.trec").write_text(RUN_B)
    (tmp_path / "queries.jsonl").write_text(
        '{"id": "q1", "query": "find alpha\\nand beta"}\n{"id": "q3", "query": "delta"}\n')
    (tmp_path / "skills.jsonl").write_text(
        '{"id": "alpha", "name": "Alpha skill"}\n{"id": "junk", "name": "Junk"}\n')
    return tmp_path


def run_json(tmp_path, capsys, *extra):
    d = files(tmp_path)
    status = main(["queries", "--qrels", str(d / "qrels.txt"), "--run", str(d / "a.trec"),
                   "--run", str(d / "b.trec"), "--metric", "Recall@2", "--format", "json",
                   *extra])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def test_losses_gains_ranks_by_hand(tmp_path, capsys):
    record = run_json(tmp_path, capsys, "--query-texts", str(tmp_path / "queries.jsonl"),
                      "--skills", str(tmp_path / "skills.jsonl"))
    # Recall@2: q1 A 2/2 -> B 0/2 (alpha at 3, beta missing); q2 1 -> 1; q3 A 0 (delta at 2?
    # no: at rank 2, within 2) = 1 -> B 1. So one loss (q1) and nothing else changes.
    assert record["counts"] == {"better": 0, "unchanged": 2, "worse": 1}
    assert record["a"] == "a" and record["b"] == "b" and record["metric"] == "Recall@2"
    assert record["gains"] == []
    (q1,) = record["losses"]
    assert (q1["query_id"], q1["a"], q1["b"], q1["change"]) == ("q1", 1.0, 0.0, -1.0)
    assert q1["text"] == "find alpha\nand beta"
    assert q1["needed"] == [
        {"skill_id": "alpha", "name": "Alpha skill", "grade": 2, "rank_a": 1, "rank_b": 3},
        {"skill_id": "beta", "name": None, "grade": 1, "rank_a": 2, "rank_b": None}]
    # in B's top 2 and not needed: x1 (unjudged), junk (judged 0)
    assert q1["in_place"] == {"side": "b", "top": 2, "skills": [
        {"skill_id": "x1", "name": None, "grade": None, "rank_a": 3, "rank_b": 1},
        {"skill_id": "junk", "name": "Junk", "grade": 0, "rank_a": None, "rank_b": 2}]}


def test_a_gain_lists_the_better_sides_intruders(tmp_path, capsys):
    d = files(tmp_path)
    status = main(["queries", "--qrels", str(d / "qrels.txt"), "--run", f"old={d / 'b.trec'}",
                   "--run", f"new={d / 'a.trec'}", "--metric", "MRR@1", "--format", "json"])
    record = json.loads(capsys.readouterr()[0])
    assert status == 0
    # MRR@1: q1 B 0 -> A 1, q3 B 1 -> A 0 (z1 first), q2 1 -> 1
    assert [q["query_id"] for q in record["gains"]] == ["q1"]
    assert [q["query_id"] for q in record["losses"]] == ["q3"]
    q3 = record["losses"][0]
    assert q3["in_place"] == {"side": "b", "top": 1, "skills": [
        {"skill_id": "z1", "name": None, "grade": None, "rank_a": 2, "rank_b": 1}]}
    q1 = record["gains"][0]
    assert q1["in_place"]["side"] == "a"
    assert [s["skill_id"] for s in q1["in_place"]["skills"]] == ["x1"]


def test_worst_and_best_limit_and_order():
    ids = np.array(["a", "b", "c", "d", "e"])
    a = PerQuery(ids, {"Recall@1": np.array([1.0, 1.0, 0.5, 0.0, 0.2])}, "A")
    b = PerQuery(ids, {"Recall@1": np.array([0.0, 0.5, 0.0, 1.0, 0.2])}, "B")
    s = queries.select(a, b, "Recall@1", worst=2, best=5)
    assert [ids[i] for i in s.losses] == ["a", "b"]  # -1 first; b and c tie at -0.5: id order
    assert [ids[i] for i in s.gains] == ["d"]
    counts = queries.explain(s, Qrels.from_dict({}), {}, {}, label_a="A", label_b="B").counts
    assert counts == {"better": 1, "unchanged": 1, "worse": 3}
    assert queries.select(a, b, "Recall@1", worst=0, best=0).chosen() == []


def test_rankings_use_the_tie_rule():
    qid = pa.array(["q", "q", "q", "r"])
    sid = pa.array(["s1", "s3", "s2", "t"])
    score = np.array([1.0, 1.0, 1.0 + 1e-12, 5.0])  # float32: all three tie
    table = pa.table({"query_id": qid, "skill_id": sid, "score": score})
    assert queries.KeptRows.of_table(table).rankings(["q", "missing"]) == {
        "q": ["s3", "s2", "s1"], "missing": []}


def test_terminal_and_markdown(tmp_path, capsys):
    d = files(tmp_path)
    argv = ["queries", "--qrels", str(d / "qrels.txt"), "--run", str(d / "a.trec"), "--run",
            str(d / "b.trec"), "--metric", "Recall@2", "--skills", str(d / "skills.jsonl")]
    assert main(argv) == 0
    text = capsys.readouterr()[0]
    assert text.splitlines()[0] == "a -> b, Recall@2 over 3 queries: 1 worse, 0 better, " \
                                   "2 unchanged"
    assert "not retrieved" in text and "in b's top 2" in text and "Alpha skill" in text
    assert main(argv + ["--format", "markdown"]) == 0
    md = capsys.readouterr()[0]
    assert "| Alpha skill | needed | 2 | 1 | 3 |" in md
    assert "| beta | needed | 1 | 2 | not retrieved |" in md


def test_bad_input(tmp_path, capsys):
    d = files(tmp_path)
    status = main(["queries", "--qrels", str(d / "qrels.txt"), "--run", str(d / "a.trec")])
    assert status == 2 and "two --run" in capsys.readouterr()[1]
    (d / "bad.jsonl").write_text("{not json\n")
    status = main(["queries", "--qrels", str(d / "qrels.txt"), "--run", str(d / "a.trec"),
                   "--run", str(d / "b.trec"), "--metric", "Recall@2", "--query-texts",
                   str(d / "bad.jsonl")])
    err = capsys.readouterr()[1]
    assert status == 2 and "bad.jsonl:1: not a JSON line" in err


def test_explain_needs_the_qrels_level():
    qrels = read_qrels({"q": {"a": 1, "b": 2}})
    ids = np.array(["q"])
    sel = queries.select(PerQuery(ids, {"Recall(rel=2)@1": np.array([1.0])}, "A"),
                         PerQuery(ids, {"Recall(rel=2)@1": np.array([0.0])}, "B"),
                         "Recall(rel=2)@1")
    report = queries.explain(sel, qrels, {"q": ["b"]}, {"q": ["a", "b"]}, label_a="A",
                             label_b="B")
    (q,) = report.losses
    assert [r.skill_id for r in q.needed] == ["b"]           # grade 1 is not needed at rel=2
    assert [r.skill_id for r in q.in_place] == ["a"]
