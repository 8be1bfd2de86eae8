"""The paired-test memo (skillret/analysis/memo.py) gives what the computation gives: column by
column, after a save and a load, in any mix of known and new columns; a stale or damaged file is
an empty memo. The compare stage with a memo equals the stage without one:
tests/pipeline/test_compare_revisions.py::test_compare_stage_with_its_memo_is_the_stage_without."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from skillret.analysis import memo as memo_module
from skillret.analysis import significance
from skillret.analysis.memo import PairedTestMemo
from skillret.analysis.significance import paired_tests

LEVELS = (0.0, 0.25, 1 / 3, 0.5, 0.63093, 1.0)
SETTINGS = {"permutations": 300, "bootstrap": 200, "seed": 4}


def table(rng, n, c):
    return rng.choice(LEVELS, (n, c)), rng.choice(LEVELS, (n, c))


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(1, 300), c=st.integers(1, 9),
       known=st.integers(0, 2 ** 9 - 1))
def test_a_memo_gives_what_the_computation_gives(seed, n, c, known):
    """Some columns seen before (alone or with others), the rest new; edge columns too: every
    difference 0 (t = 0), one constant difference (t infinite), a single query (t None)."""
    rng = np.random.default_rng(seed)
    base, run = table(rng, n, c)
    if c > 1:
        run[:, 0] = base[:, 0]                              # no difference at all
        run[:, 1] = np.clip(base[:, 1] + 0.125, None, 2.0)  # the same difference everywhere
    want = paired_tests(base, run, **SETTINGS)
    memo = PairedTestMemo()
    seen = [j for j in range(c) if known >> j & 1]
    if seen:
        assert memo.paired_tests(base[:, seen], run[:, seen], **SETTINGS) == [want[j]
                                                                               for j in seen]
    assert memo.paired_tests(base, run, **SETTINGS) == want
    # columns equal to one another (likely with one query) are one test, computed once
    pairs = [(base[:, j].tobytes(), run[:, j].tobytes()) for j in range(c)]
    first = {pairs[j] for j in seen}
    assert memo.computed == len(set(pairs))
    assert memo.hits == (len(seen) - len(first)) + sum(p in first for p in pairs)


def test_saved_and_loaded_it_computes_nothing(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    base, run = table(rng, 200, 5)
    want = paired_tests(base, run, **SETTINGS)
    first = PairedTestMemo()
    first.paired_tests(base, run, **SETTINGS)
    first.save(tmp_path / "memo.json")

    def refuse(*args, **kwargs):
        raise AssertionError("computed again")
    monkeypatch.setattr(significance, "paired_tests", refuse)
    again = PairedTestMemo.load(tmp_path / "memo.json")
    assert again.paired_tests(base, run, **SETTINGS) == want
    assert again.hits == 5 and again.computed == 0


def test_infinite_t_and_no_interval_survive_the_file(tmp_path):
    base = np.zeros((6, 2))
    run = np.column_stack([np.full(6, 0.5), np.zeros(6)])
    want = paired_tests(base, run, permutations=50, bootstrap=0, seed=0)
    assert want[0]["t"] == math.inf and want[0]["ci95"] is None and want[1]["t"] == 0.0
    memo = PairedTestMemo()
    memo.paired_tests(base, run, permutations=50, bootstrap=0, seed=0)
    memo.save(tmp_path / "memo.json")
    loaded = PairedTestMemo.load(tmp_path / "memo.json")
    assert loaded.paired_tests(base, run, permutations=50, bootstrap=0, seed=0) == want
    assert loaded.computed == 0


def test_the_file_keeps_only_what_was_used_sorted(tmp_path):
    rng = np.random.default_rng(2)
    base, run = table(rng, 50, 4)
    memo = PairedTestMemo()
    memo.paired_tests(base, run, **SETTINGS)
    memo.save(tmp_path / "all.json")
    later = PairedTestMemo.load(tmp_path / "all.json")
    later.paired_tests(base[:, [2, 0]], run[:, [2, 0]], **SETTINGS)
    later.save(tmp_path / "two.json")
    kept = json.loads((tmp_path / "two.json").read_text())["tests"]
    assert len(kept) == 2 and list(kept) == sorted(kept)
    fresh = PairedTestMemo()                       # the same columns computed afresh: same file
    fresh.paired_tests(base[:, [0, 2]], run[:, [0, 2]], **SETTINGS)
    fresh.save(tmp_path / "fresh.json")
    assert (tmp_path / "fresh.json").read_bytes() == (tmp_path / "two.json").read_bytes()


@pytest.mark.parametrize("damage", ["not json", "version", "entries", "missing"])
def test_a_stale_or_damaged_file_is_an_empty_memo(tmp_path, damage):
    rng = np.random.default_rng(3)
    base, run = table(rng, 40, 3)
    memo = PairedTestMemo()
    memo.paired_tests(base, run, **SETTINGS)
    path = tmp_path / "memo.json"
    memo.save(path)
    data = json.loads(path.read_text())
    if damage == "not json":
        path.write_text(path.read_text()[:100])
    elif damage == "version":                     # other code or another numpy: never read
        data["version"] = data["version"].replace("numpy", "numpy 0.0; was")
        path.write_text(json.dumps(data))
    elif damage == "entries":
        data["tests"] = [1, 2]
        path.write_text(json.dumps(data))
    else:
        path.unlink()
    loaded = PairedTestMemo.load(path)
    assert loaded.paired_tests(base, run, **SETTINGS) == paired_tests(base, run, **SETTINGS)
    assert loaded.computed == 3


def test_every_setting_and_value_is_part_of_the_key():
    rng = np.random.default_rng(4)
    base, run = table(rng, 60, 1)
    memo = PairedTestMemo()
    memo.paired_tests(base, run, **SETTINGS)
    for changed in ({"permutations": 301}, {"bootstrap": 201}, {"seed": 5}):
        memo.paired_tests(base, run, **{**SETTINGS, **changed})
    other = run.copy()
    other[7, 0] = np.nextafter(other[7, 0], 2.0)     # one value, one bit
    memo.paired_tests(base, other, **SETTINGS)
    memo.paired_tests(other, run, **SETTINGS)          # baseline and run are not symmetric
    memo.paired_tests(run, base, **SETTINGS)
    memo.paired_tests(base[:59], run[:59], **SETTINGS)
    assert memo.computed == 8 and memo.hits == 0


def test_the_version_names_the_code_and_the_libraries():
    text = memo_module.version()
    assert "significance.py sha256" in text and f"numpy {np.__version__}" in text
