"""The paired tests against independent oracles: scipy's t-test, the exact sign-flip
distribution enumerated by hand, statsmodels' multiple-testing corrections; and properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats import multitest

from skillret.analysis import significance
from skillret.analysis.significance import (adjust, bootstrap_interval, paired_tests, sign_flip_p,
                                            t_test)



def metric_values(rng, n, levels=(0.0, 0.25, 1 / 3, 0.5, 0.63093, 1.0)):
    """Per-query values as metrics produce them: a few distinct levels, many ties."""
    return rng.choice(levels, size=n)


@pytest.mark.parametrize("n", [2, 3, 7, 30, 98, 500])
def test_t_test_equals_scipy_ttest_rel(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        a, b = metric_values(rng, n), metric_values(rng, n)
        d = b - a
        t, p = t_test(d[:, None])
        if not d.any() or (d == d[0]).all():
            continue
        expected = scipy_stats.ttest_rel(b, a)
        assert t[0] == pytest.approx(expected.statistic, rel=1e-12)
        assert p[0] == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-300)


def test_t_test_edge_cases():
    t, p = t_test(np.zeros((5, 1)))
    assert (t[0], p[0]) == (0.0, 1.0)
    t, p = t_test(np.full((5, 1), 0.25))
    assert t[0] == math.inf and p[0] == 0.0
    t, p = t_test(np.full((5, 1), -0.25))
    assert t[0] == -math.inf and p[0] == 0.0
    # scipy agrees in the limit: a constant difference gives an infinite t and p = 0
    assert scipy_stats.ttest_rel(np.full(5, 0.75), np.full(5, 0.5)).pvalue == 0.0
    t, p = t_test(np.array([[0.5]]))
    assert (t[0], p[0]) == (None, None)


def exact_p(d) -> float:
    """The sign-flip p-value by enumerating every sign vector in plain Python."""
    observed = abs(math.fsum(d))
    hits = 0
    count = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        count += 1
        if abs(math.fsum(s * x for s, x in zip(signs, d))) >= observed - 1e-12:
            hits += 1
    return hits / count


@pytest.mark.parametrize("n", [1, 2, 5, 9, 12])
def test_exact_mode_equals_enumeration(n):
    rng = np.random.default_rng(100 + n)
    a = metric_values(rng, (n, 6))
    b = metric_values(rng, (n, 6))
    b[:, 0] = a[:, 0]  # one column with no difference at all
    stats = paired_tests(a, b, permutations=2 ** n, bootstrap=0)
    for j, row in enumerate(stats):
        assert row["randomization"] == "exact"
        assert row["p_randomization"] == pytest.approx(exact_p(b[:, j] - a[:, j]), abs=1e-12)
    assert stats[0]["p_randomization"] == 1.0


@pytest.mark.parametrize("n", [8, 12])
def test_monte_carlo_p_converges_to_the_exact_p(n):
    rng = np.random.default_rng(7 * n)
    a, b = metric_values(rng, (n, 8)), metric_values(rng, (n, 8))
    m = 40000
    mc = sign_flip_p(b - a, m, np.random.default_rng(1))
    for j in range(8):
        exact = exact_p(b[:, j] - a[:, j])
        sd = math.sqrt(exact * (1 - exact) / m)
        assert abs(mc[j] - exact) <= 5 * sd + 1 / (m + 1)


def test_monte_carlo_p_is_b_plus_one_over_m_plus_one():
    d = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                  1.0, 1.0, 1.0, 1.0, 1.0])
    # only the all-plus and all-minus vectors reach |sum| = 20: about 2 in a million draws
    p = sign_flip_p(d[:, None], 999, np.random.default_rng(0))
    assert p[0] == pytest.approx(1 / 1000)  # never 0
    # every difference 0: every draw ties, p = 1
    assert sign_flip_p(np.zeros((20, 1)), 999, np.random.default_rng(0))[0] == 1.0


def test_float_ties_count_as_ties():
    # sums of the same values in another order differ in the last bit; they still tie
    d = np.array([0.1, 0.2, 0.3, -0.6, 0.7, 0.1, 0.1, 0.3])
    assert paired_tests(np.zeros(8), d, permutations=256, bootstrap=0)[0][
        "p_randomization"] == pytest.approx(exact_p(d))


@pytest.mark.parametrize("method,theirs", [("holm", "holm"), ("bh", "fdr_bh")])
def test_corrections_equal_statsmodels(method, theirs):
    rng = np.random.default_rng(3)
    for size in (1, 2, 5, 40, 120):
        p = rng.uniform(0, 0.2, size)
        p[: size // 3] = p[0]  # ties
        expected = multitest.multipletests(p, method=theirs)[1]
        np.testing.assert_allclose(adjust(p, method), expected, rtol=1e-12)
    assert list(adjust([0.01, 0.5], "none")) == [0.01, 0.5]


def test_same_seed_same_numbers_whatever_the_block_or_columns(monkeypatch):
    rng = np.random.default_rng(5)
    a, b = metric_values(rng, (300, 4)), metric_values(rng, (300, 4))
    full = paired_tests(a, b, permutations=2500, bootstrap=700, seed=11)
    monkeypatch.setattr(significance, "BLOCK", 333)
    again = paired_tests(a, b, permutations=2500, bootstrap=700, seed=11)
    monkeypatch.undo()
    alone = paired_tests(a[:, 2], b[:, 2], permutations=2500, bootstrap=700, seed=11)
    assert full == again
    # one column alone: the same draws and the same bits (every sum runs along its own copy)
    assert alone[0] == full[2]
    some = paired_tests(a[:, [3, 1]], b[:, [3, 1]], permutations=2500, bootstrap=700, seed=11)
    assert some == [full[3], full[1]]
    other = paired_tests(a, b, permutations=2500, bootstrap=700, seed=12)
    assert other != full


def _plain_bootstrap(d, resamples, rng, level=0.95):
    """The percentile interval, one resample at a time: ``floor(u * n)`` as int64 indices,
    their counts, the mean's terms added in query order (as ``bootstrap_interval`` documents)."""
    n = d.shape[0]
    means = np.empty((resamples, d.shape[1]))
    for r in range(resamples):
        picks = np.minimum((rng.random(n) * n).astype(np.int64), n - 1)
        counts = np.bincount(picks, minlength=n).astype(np.float64)
        means[r] = np.einsum("n,cn->c", counts, np.ascontiguousarray(d.T), optimize=False) / n
    tail = (1.0 - level) / 2.0
    return np.quantile(means, [tail, 1.0 - tail], axis=0)


@pytest.mark.parametrize("n, block", [(1, 7), (2, 1000), (37, 5), (300, 64), (1001, 333)])
def test_bootstrap_interval_equals_one_resample_at_a_time(n, block, monkeypatch):
    # blocks of resamples against one resample at a time
    rng = np.random.default_rng(n)
    d = metric_values(rng, (n, 3)) - metric_values(rng, (n, 3))
    monkeypatch.setattr(significance, "BLOCK", block)
    fast = bootstrap_interval(d, 250, np.random.default_rng(3))
    plain = _plain_bootstrap(d, 250, np.random.default_rng(3))
    assert np.array_equal(fast, plain)


def test_bootstrap_interval_holds_the_mean_difference():
    rng = np.random.default_rng(9)
    a = metric_values(rng, 400)
    b = np.clip(a + rng.normal(0.05, 0.2, 400), 0, 1)
    row = paired_tests(a, b, permutations=100, bootstrap=2000)[0]
    low, high = row["ci95"]
    assert low < row["delta"] < high
    # the interval's width is about 2 x 1.96 standard errors of the mean
    se = np.std(b - a, ddof=1) / math.sqrt(400)
    assert (high - low) == pytest.approx(2 * 1.96 * se, rel=0.15)


values = st.lists(st.sampled_from([0.0, 0.2, 1 / 3, 0.5, 0.63093, 1.0]), min_size=1,
                  max_size=40)


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_properties(data):
    a = np.array(data.draw(values))
    b = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.2, 1 / 3, 0.5, 0.63093, 1.0]),
                                    min_size=len(a), max_size=len(a))))
    seed = data.draw(st.integers(0, 2 ** 32 - 1))
    self_row = paired_tests(a, a, permutations=200, bootstrap=50, seed=seed)[0]
    assert self_row["delta"] == 0 and self_row["p_randomization"] == 1.0
    assert self_row["p_t"] == 1.0 and self_row["t"] == 0.0
    assert self_row["ties"] == len(a) and self_row["ci95"] == (0.0, 0.0)
    forward = paired_tests(a, b, permutations=200, bootstrap=50, seed=seed)[0]
    backward = paired_tests(b, a, permutations=200, bootstrap=50, seed=seed)[0]
    assert backward["delta"] == -forward["delta"]
    assert backward["p_randomization"] == forward["p_randomization"]
    assert backward["p_t"] == forward["p_t"]
    if forward["t"] is not None:
        assert backward["t"] == -forward["t"]
    assert (backward["wins"], backward["ties"], backward["losses"]) == (
        forward["losses"], forward["ties"], forward["wins"])
    low, high = forward["ci95"]
    assert backward["ci95"] == pytest.approx((-high, -low), abs=1e-12)
    assert 0 < forward["p_randomization"] <= 1
    if forward["p_t"] is not None:
        assert 0 <= forward["p_t"] <= 1
    ps = [forward["p_randomization"], backward["p_randomization"], self_row["p_randomization"]]
    for method in ("holm", "bh", "none"):
        adjusted = adjust(ps, method)
        assert ((0 < adjusted) & (adjusted <= 1)).all() and (adjusted >= np.array(ps)).all()


def test_a_significant_difference_on_unjudged_skills_is_flagged():
    """Judged@K at most 0.8 of the baseline's, beside a significant difference: a note, kept in
    the result and shown under the summary; not significant, or judged alike: none."""
    from skillret.analysis.compare import flag_unjudged
    from skillret.render.compare import summary_lines

    result = {"runs": {"a": {"Recall@5": {"significant": True}, "NDCG@10": {"significant": True}},
                       "b": {"Recall@5": {"significant": False}}},
              "baseline": "base", "queries": 3, "query_set": "all-judged",
              "tests": {"randomization": "exact", "seed": 0, "correction": "holm", "alpha": 0.05}}
    base = {"Judged@5": 0.25, "Judged@10": 0.15}
    notes = flag_unjudged(result, {"a": (base, {"Judged@5": 0.2, "Judged@10": 0.13}),
                                   "b": (base, {"Judged@5": 0.1})})
    assert notes == ["a Recall@5: its top 5 holds 20% fewer judged skills than the baseline's "
                     "(Judged@5 0.20000 vs 0.25000): unjudged skills count as not relevant"]
    assert result["unjudged"] == notes
    assert summary_lines(result)[-1] == f"unjudged: {notes[0]}"
    assert flag_unjudged({"runs": {"a": {"Recall@5": {"significant": True}}}}, {}) == []
