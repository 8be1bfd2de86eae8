"""skillret's fusion against ranx's ``fuse`` on the same inputs (ranx is in the bench extra).

Where they agree: every fused score (to float tolerance) and every ranking up to the order of
equal fused scores. Where they differ, by design (docs/benchmarks.md, "Fusion"):

- equal fused scores: skillret orders them by skill id descending (trec_eval's rule, so the
  order written is the order scored); ranx by its own sort;
- ``minmax`` of a ranking whose scores are all equal: 1 here (as issue #13 defines it), 0 in
  ranx (it divides by max(max - min, 1e-9));
- ranx requires every run to hold the same queries; skillret fuses the union;
- skillret cuts at ``depth`` (100); ranx keeps everything.
"""

from __future__ import annotations

import numpy as np
import pytest

from skillret.api import fuse

# ranx compiles its numba functions in every process that uses it (about 10 s of CPU, minutes on
# the first run after installing): the slow tier. The fast tier checks fusion against its
# definitions (tests/analysis/test_fusion.py).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ranx():
    """Imported when a test runs, not when the fast tier collects (and deselects) them: the
    import alone (numba) is 3 s of CPU."""
    import ranx  # the test extra brings it: a missing ranx fails, it does not skip
    return ranx

RANX = {("rrf", None): ("rrf", None), ("combsum", "minmax"): ("sum", "min-max"),
        ("combmnz", "minmax"): ("mnz", "min-max"), ("combsum", "zscore"): ("sum", "zmuv"),
        ("combmnz", "zscore"): ("mnz", "zmuv"), ("combsum", "none"): ("sum", None)}


def generated_runs(seed: int, n_runs: int = 3, queries: int = 25):
    """Runs over one skill pool, every run holding every query, scores distinct per ranking
    (so each run's ranks do not depend on a tie rule), rankings of 2 to 40 results."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(queries):
            n = int(rng.integers(2, 41))
            skills = rng.choice(80, n, replace=False)
            scores = rng.permutation(n) + rng.random(n) * 0.5
            run[f"q{q}"] = {f"s{s}": float(v) for s, v in zip(skills, scores)}
        runs.append(run)
    return runs


def tie_groups(ranking: list[tuple[str, float]]) -> list[frozenset]:
    """The ranking as consecutive sets of skills with equal fused scores (to rounding: the
    two sum a skill's contributions in different orders)."""
    groups: list[tuple[float, set]] = []
    for skill, score in ranking:
        if groups and score == pytest.approx(groups[-1][0], rel=1e-9, abs=1e-12):
            groups[-1][1].add(skill)
        else:
            groups.append((score, {skill}))
    return [frozenset(skills) for _, skills in groups]


@pytest.mark.parametrize("method, norm", list(RANX))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_same_scores_and_rankings_as_ranx(ranx, method, norm, seed):
    runs = generated_runs(seed)
    ours = fuse(runs, method=method, norm=norm, depth=10**6)
    ranx_method, ranx_norm = RANX[(method, norm)]
    theirs = ranx.fuse([ranx.Run.from_dict(r) for r in runs], norm=ranx_norm,
                       method=ranx_method).to_dict()
    got: dict[str, list] = {}
    for q, s, v in zip(ours.query_id.to_pylist(), ours.skill_id.to_pylist(), ours.score):
        got.setdefault(q, []).append((s, float(v)))
    assert set(got) == set(theirs)
    for q, ranking in got.items():
        expected = sorted(theirs[q].items(), key=lambda item: -item[1])
        assert dict(ranking) == pytest.approx(dict(expected), rel=1e-9, abs=1e-12)
        # the same order, up to the order of equal fused scores
        assert tie_groups(ranking) == tie_groups(expected)


def test_known_difference_minmax_of_equal_scores(ranx):
    runs = [{"q": {"a": 2.0, "b": 2.0}}, {"q": {"a": 1.0, "c": 0.5}}]
    ours = fuse(runs, method="combsum", norm="minmax")
    theirs = ranx.fuse([ranx.Run.from_dict(r) for r in runs], norm="min-max",
                       method="sum").to_dict()
    assert dict(zip(ours.skill_id.to_pylist(), ours.score.tolist())) == \
        {"a": 2.0, "b": 1.0, "c": 0.0}           # run 1's equal scores normalise to 1
    assert theirs["q"] == {"a": 1.0, "b": 0.0, "c": 0.0}  # ranx: to 0
