"""Aggregation: the query counts every report shares, and the two query sets' arithmetic."""

from __future__ import annotations

import pytest

import skillret
from skillret.scoring.aggregate import count_queries
from skillret.scoring.profiles import ALL_JUDGED, RUN_JUDGED, Profile

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 2}, "q4": {"d": 1, "e": 1}}
RUNS = [
    {"q1": {"a": 1.0}, "q2": {}, "q5": {"x": 1.0}},        # judged, empty, unjudged; 2 missing
    {"q4": {"e": 2.0, "d": 1.0, "z": 0.5}},               # one query
    {q: {"a": 1.0, "b": 0.5} for q in ("q1", "q2", "q3", "q4", "q9")},
]


@pytest.mark.parametrize("run", RUNS)
def test_scores_and_validation_count_queries_alike(run):
    """aggregate.count_queries is the one counter; validation's report must agree with it."""
    scores = skillret.score(QRELS, run, ["official", "mia5150"])
    counts = count_queries(scores.results, scores.qrels)
    report = skillret.validate(QRELS, run)["queries"]
    assert {**report, "judged": report["in_qrels"]} == {**counts._asdict(),
                                                        "in_qrels": counts.judged}
    assert scores.query_counts == {**counts._asdict(), "evaluated": {
        "official": counts.in_both, "mia5150": counts.judged}}
    assert scores.to_dict()["queries"] == scores.query_counts  # the JSON key is unchanged


def test_query_sets_by_their_internal_names():
    names = ("MRR@5",)
    run = {"q1": {"a": 1.0}, "q2": {"x": 1.0}}  # q1 scores 1, q2 scores 0, q3/q4 absent
    run_judged = Profile("r", names, query_set=RUN_JUDGED, rounding=None)
    all_judged = Profile("a", names, query_set=ALL_JUDGED, rounding=None)
    assert run_judged.query_set == "run-judged" and run_judged.run_queries_only
    assert not all_judged.run_queries_only
    assert skillret.evaluate(QRELS, run, run_judged) == {"MRR@5": 0.5}
    assert skillret.evaluate(QRELS, run, all_judged) == {"MRR@5": 0.25}


def test_trec_eval_is_the_official_profile_at_its_cutoffs():
    run = RUNS[2]
    assert skillret.trec_eval(QRELS, run) == skillret.evaluate(QRELS, run, "official")
