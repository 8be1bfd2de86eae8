"""``Evaluator(qrels, profiles).evaluate(run)``: lookups prepared once, any run scored, the same
numbers as ``skillret.score``; qrels immutable."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

import skillret
from skillret import Evaluator
from skillret.columnar.qrels import Qrels

QRELS = {"q1": {"A": 2, "B": 1}, "q2": {"C": 1}, "q3": {"D": 1}}
RUNS = [
    {"q1": {"A": 0.9, "X": 0.8, "B": 0.7}, "q2": {"C": 0.5}},
    {"q1": {"B": 1.0}, "q2": {"Y": 0.3, "C": 0.2}, "q3": {}},
    {"q3": {"D": 1.0, "A": 0.5}},
]


def test_one_evaluator_scores_many_runs_of_any_kind(tmp_path):
    evaluator = Evaluator(QRELS, ["official", "mia5150"])
    judgments = evaluator.judgments
    for i, run in enumerate(RUNS):
        expected = skillret.score(QRELS, run, ["official", "mia5150"]).to_dict()
        assert evaluator.evaluate(run).to_dict() == expected
        path = tmp_path / f"run{i}.trec"
        path.write_text("".join(f"{q} Q0 {s} 1 {v} r\n" for q, docs in run.items()
                                for s, v in docs.items()))
        if all(run.values()):  # TREC cannot say "this query retrieved nothing"
            assert evaluator.evaluate(path).to_dict() == expected
        frame = pd.DataFrame([(q, s, v) for q, docs in run.items() for s, v in docs.items()],
                             columns=["query_id", "skill_id", "score"])
        if all(run.values()):
            assert evaluator.evaluate(frame).to_dict() == expected
    assert evaluator.judgments is judgments  # prepared once


def test_qrels_are_immutable():
    qrels = Qrels.from_dict(QRELS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        qrels.source = "elsewhere"
    with pytest.raises(ValueError):
        qrels.relevance[0] = 5
    assert qrels.queries.to_pylist() == ["q1", "q2", "q3"]
    assert qrels.offsets.tolist() == [0, 2, 3, 4]
