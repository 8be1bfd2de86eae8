"""Differential tests: the engine against pytrec_eval (trec_eval's C code) on generated cases,
and Judged@K against ir_measures (the one measure pytrec_eval lacks).

Generated: ties between ids that sort differently (case, digits, multi-byte UTF-8), graded and
negative grades, relevance levels 1-3, empty rankings, judged queries missing from the run, run
queries absent from the qrels, queries judged only with grade 0, cutoffs beyond the ranking.
Per-query values must be *identical* (==, not approximately equal) to pytrec_eval's.
"""

from __future__ import annotations

import math

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytrec_eval = pytest.importorskip("pytrec_eval")

import reference  # noqa: E402

import skillret  # noqa: E402
from skillret.columnar.qrels import Qrels  # noqa: E402
from skillret.scoring.names import Metric  # noqa: E402
from skillret.scoring.profiles import Profile  # noqa: E402
from skillret.columnar.runs import Run  # noqa: E402
from skillret.api import score  # noqa: E402
from skillret.scoring.evaluator import Evaluator  # noqa: E402

# ids whose byte order differs from case-insensitive, numeric or length order
SKILLS = ["a", "B", "b", "Ab", "aB", "10", "9", "09", "z", "é", "e", "ß", "skill-1", "skill-10",
          "skill-2", "Z", "_", "a-b", "ab", "éa"]
# ids of one byte length take the fingerprint paths (duplicates, judgment lookup); "é" and "ß"
# are two bytes too. The qrels may also judge ids of other lengths, which no result can match.
ONE_LENGTH = ["ab", "aB", "Ab", "AB", "10", "09", "9a", "zz", "é", "ß", "_a", "a_", "Z9", "b1"]
OTHER_LENGTHS = ["a", "abc", "zzz"]
QUERIES = [f"q{i}" for i in range(10)]
SCORES = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 0.5, -1.0, 2.5, 1e-300, 1 / 3, 3.0]),
                   st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))

# 300 examples each under CI (a tenth while developing; SKILLRET_HYPOTHESIS=thorough: 4800):
# tests/budget.py
DIFFERENTIAL = settings(max_examples=examples(300), deadline=None,
                        suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cases(draw):
    one_length = draw(st.booleans())
    pool = ONE_LENGTH if one_length else SKILLS
    judged_pool = ONE_LENGTH + OTHER_LENGTHS if one_length else SKILLS
    qrels_queries = draw(st.lists(st.sampled_from(QUERIES), unique=True, max_size=8))
    qrels = {}
    for q in qrels_queries:
        skills = draw(st.lists(st.sampled_from(judged_pool), unique=True, max_size=7))
        grades = draw(st.lists(st.integers(-2, 3), min_size=len(skills), max_size=len(skills)))
        qrels[q] = dict(zip(skills, grades))          # may be {} (no judgments)
    run_queries = draw(st.lists(st.sampled_from(QUERIES), unique=True, max_size=8))
    run = {}
    for q in run_queries:
        skills = draw(st.lists(st.sampled_from(pool), unique=True, max_size=len(pool)))
        ranking = {s: draw(SCORES) for s in skills}   # may be {} (empty ranking)
        if draw(st.booleans()):  # as retrievers write them: best first (ties straddle cutoffs)
            ranking = dict(sorted(ranking.items(), key=lambda item: -item[1]))
        run[q] = ranking
    ks = draw(st.lists(st.integers(1, 25), min_size=1, max_size=4, unique=True))
    level = draw(st.integers(1, 3))
    return qrels, run, sorted(ks), level


def engine_per_query(qrels, run, ks, level):
    metrics = [Metric(m, k, level) for k in ks
               for m in ("NDCG", "MAP", "Recall", "Precision", "Completeness", "MRR")]
    res = Evaluator(Qrels.from_dict(qrels), [], extra_metrics=metrics).query_results(
        Run.from_dict(run))[0]
    queries = res.queries.to_pylist()
    return {q: {(m.measure, m.k): float(res.values[m][i]) for m in metrics}
            for i, q in enumerate(queries) if res.judged_index[i] >= 0}


@DIFFERENTIAL
@given(cases())
def test_per_query_values_identical_to_pytrec_eval(case):
    qrels, run, ks, level = case
    expected = reference.per_query(qrels, run, ks, relevance_level=level)
    got = engine_per_query(qrels, run, ks, level)
    assert list(got) == list(expected)  # same queries, in the same (run) order
    for q in expected:
        assert got[q] == expected[q], q


@DIFFERENTIAL
@given(cases())
def test_drop_in_equals_official_function(case):
    qrels, run, ks, _ = case
    expected = reference.official_trec_eval(qrels, run, tuple(ks))
    got = skillret.trec_eval(qrels, run, tuple(ks))
    assert list(got.items()) == list(expected.items())


@DIFFERENTIAL
@given(cases())
def test_official_and_all_judged_query_sets(case):
    qrels, run, ks, level = case
    judged = [q for q, docs in qrels.items() if docs]
    if not judged:
        return
    names = tuple(f"{m}@{k}" for m in ("NDCG", "MAP", "Recall", "Precision", "Completeness",
                                        "MRR") for k in ks)
    official = Profile("o", names, query_set="run-judged", relevance_level=level, rounding=None)
    every = Profile("a", names, query_set="all-judged", relevance_level=level, rounding=None)
    if not any(q in run for q in judged):
        with pytest.raises(skillret.InputError, match="no query in common"):
            score(qrels, run, [official, every])
        return
    scores = score(qrels, run, [official, every])
    expected = reference.per_query(qrels, run, ks, relevance_level=level)
    for name in names:
        m = skillret.parse_metric(name)
        key = (m.measure, m.k)
        total = 0.0
        for q in expected:  # pytrec_eval's queries, in run order
            total += expected[q][key]
        assert scores.metrics["o"][name] == total / max(len(expected), 1)
        assert scores.metrics["a"][name] == reference.all_judged_mean(qrels, expected, key)
    counts = scores.query_counts
    assert counts["evaluated"] == {"o": len(expected), "a": len(judged)}
    assert counts["missing"] == len([q for q in judged if q not in run])
    assert counts["empty"] == len([q for q in run if not run[q]])
    assert counts["unjudged"] == len([q for q in run if not qrels.get(q)])


def test_sum_order_is_the_runs_order():
    """At a rounding boundary the order of additions decides the fifth decimal: the official
    function adds in the run's order, and so must we."""
    # 0.2 + 0.4 + 0.2 != 0.2 + 0.2 + 0.4 in binary floating point
    qrels = {f"q{i}": {"r1": 1, "r2": 1, "r3": 1} for i in range(3)}
    hits = {"q0": 1, "q1": 2, "q2": 1}
    run = {q: {**{f"r{j + 1}": 10.0 - j for j in range(n)},
               **{f"x{j}": 1.0 - j / 10 for j in range(5)}} for q, n in hits.items()}
    a = skillret.trec_eval(qrels, run)
    assert a == reference.official_trec_eval(qrels, run)
    reordered = dict(reversed(list(run.items())))
    assert skillret.trec_eval(qrels, reordered) == reference.official_trec_eval(qrels, reordered)


def test_relevance_level_does_not_change_ndcg_gains():
    qrels = {"q": {"a": 1, "b": 2, "c": 3}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    level1 = engine_per_query(qrels, run, [3], 1)["q"]
    level3 = engine_per_query(qrels, run, [3], 3)["q"]
    assert level1[("NDCG", 3)] == level3[("NDCG", 3)]
    assert level3[("Recall", 3)] == 1.0 and level3[("Precision", 3)] == 1 / 3
    assert math.isclose(level1[("NDCG", 3)],
                        (1 + 2 / math.log2(3) + 3 / 2) / (3 + 2 / math.log2(3) + 1 / 2))


def engine_values(qrels, run, metrics):
    res = Evaluator(Qrels.from_dict(qrels), [], extra_metrics=metrics).query_results(
        Run.from_dict(run))[0]
    return {q: {(m.measure, m.k): float(res.values[m][i]) for m in metrics}
            for i, q in enumerate(res.queries.to_pylist()) if res.judged_index[i] >= 0}


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_new_measures_identical_to_pytrec_eval_and_ir_measures(case):
    """Success@K, the whole-ranking NDCG, MAP, MRR, RPrec and Bpref against pytrec_eval;
    Judged@K and Judged against ir_measures; computed beside the cut measures in one pass (the
    whole rankings laid out however short the cutoffs)."""
    qrels, run, ks, level = case
    metrics = ([Metric(m, k, level) for k in ks for m in ("Success", "Judged", "NDCG")]
               + [Metric(m, None, level) for m in (*reference.WHOLE, "Judged")])
    expected = reference.per_query_more(qrels, run, ks, level)
    judged = reference.judged(qrels, run, ks)
    got = engine_values(qrels, run, metrics)
    cut = reference.per_query(qrels, run, ks, relevance_level=level)
    assert list(got) == list(expected)
    for q in expected:
        empty = {("Judged", k): 0.0 for k in [*ks, None]}   # ir_measures fails on these
        want = {**expected[q], **judged.get(q, empty),
                **{("NDCG", k): cut[q][("NDCG", k)] for k in ks}}
        assert got[q] == want, q


def test_only_grades_below_minus_one():
    """A query judged only with grades <= -2 is judged (it is averaged) and scores 0 everywhere;
    by hand: NDCG@5 is (1 + 0) / 2."""
    qrels = {"p": {"x": 3}, "q": {"a": -2, "b": -3}}
    run = {"p": {"x": 1.0}, "q": {"a": 1.0, "b": 0.5}}
    got = engine_per_query(qrels, run, [5], 1)
    assert set(got) == {"p", "q"}
    assert all(v == 0.0 for v in got["q"].values())
    assert skillret.trec_eval(qrels, run)["NDCG@5"] == 0.5
