"""Hand-computed examples, each value derived in the comment beside it."""

from __future__ import annotations

import math

import pytest

import skillret

# Judged A, B, C (grade 1); retrieved X, A, Y, C, Z.
QRELS = {"q1": {"A": 1, "B": 1, "C": 1}}
RUN = {"q1": {"X": 5.0, "A": 4.0, "Y": 3.0, "C": 2.0, "Z": 1.0}}


def test_the_issue_worked_example():
    got = skillret.evaluate(QRELS, RUN, "mia5150")
    # DCG@5 = 1/log2(3) + 1/log2(5); IDCG@5 = 1 + 1/log2(3) + 1/log2(4)
    ndcg = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 0.5)
    assert got["NDCG@5"] == round(ndcg, 5) == 0.49819
    assert got["Recall@5"] == 0.66667        # 2 of 3 relevant within 5
    assert got["Precision@5"] == 0.4         # 2 / 5
    assert got["MAP@5"] == 0.33333           # (1/2 + 2/4) / 3: B, never retrieved, counts
    assert got["Completeness@5"] == 0.0      # B is missing
    assert got["MRR@5"] == 0.5               # first hit at rank 2
    assert got["Precision@10"] == 0.2        # still / 10 with only 5 retrieved
    assert got["MRR@10"] == 0.5


def test_ties_are_broken_by_skill_id_descending():
    # All scores equal: trec_eval orders by id descending, so "b" (relevant) comes first.
    got = skillret.evaluate({"q": {"b": 1}}, {"q": {"a": 1.0, "b": 1.0, "B": 1.0}}, "mia5150")
    assert got["MRR@5"] == 1.0
    got = skillret.evaluate({"q": {"B": 1}}, {"q": {"a": 1.0, "b": 1.0, "B": 1.0}}, "mia5150")
    assert got["MRR@5"] == round(1 / 3, 5)  # "B" (0x42) sorts below "a" (0x61) and "b"


def test_scores_tie_at_single_precision():
    # 0.1 and 0.1 + 2**-56 are one float32: a tie, so "b" (id descending) comes first.
    run = {"q": {"a": 0.1 + 2 ** -56, "b": 0.1}}
    assert skillret.evaluate({"q": {"b": 1}}, run, "mia5150")["MRR@5"] == 1.0
    assert skillret.evaluate({"q": {"a": 1}}, run, "mia5150")["MRR@5"] == 0.5


def test_rank_column_is_ignored(tmp_path):
    run = tmp_path / "run.trec"
    # ranks say B first, scores say A first
    run.write_text("q Q0 A 2 0.9 t\nq Q0 B 1 0.1 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 A 1\n")
    assert skillret.evaluate(qrels, run, "mia5150")["MRR@5"] == 1.0


def test_graded_ndcg_and_negative_grades():
    qrels = {"q": {"a": 2, "b": 1, "c": -1, "d": 0}}
    run = {"q": {"c": 4.0, "b": 3.0, "a": 2.0, "d": 1.0}}
    got = skillret.evaluate(qrels, run, skillret.Profile(
        "t", ("NDCG@3", "Recall@3", "Precision@3", "MAP@3"), rounding=None))
    dcg = 0 + 1 / math.log2(3) + 2 / math.log2(4)       # c gives 0, b 1, a 2
    idcg = 2 + 1 / math.log2(3)                           # ideal: a (2), b (1)
    assert got["NDCG@3"] == pytest.approx(dcg / idcg, abs=0)
    assert got["Recall@3"] == 1.0
    assert got["Precision@3"] == 2 / 3
    assert got["MAP@3"] == (1 / 2 + 2 / 3) / 2


def test_query_sets_differ_only_in_the_queries_averaged():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q2": {}, "q4": {"x": 1.0}}   # q2 empty, q3 missing, q4 unjudged
    official = skillret.evaluate(qrels, run, "official")
    every = skillret.evaluate(qrels, run, "mia5150")
    assert official["Recall@5"] == 0.5        # q1 and q2 (empty, scores 0)
    assert every["Recall@5"] == 0.33333       # q1, q2 and q3 (missing, scores 0)


def test_per_query_frame():
    frame = skillret.per_query(QRELS, RUN, "mia5150")
    assert list(frame.columns[:4]) == ["query_id", "retrieved", "relevant", "NDCG@5"]
    assert frame.loc[0, "retrieved"] == 5 and frame.loc[0, "relevant"] == 3
    assert frame.loc[0, "MAP@5"] == 1 / 3
