"""Cutoffs, relevance levels, rounding and ``k_values`` are checked against documented limits
before anything is sized by them (a cutoff of 10**12 once asked for a 7 TiB allocation)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import cli_server
import numpy as np
import pytest

import skillret
from skillret.errors import ConfigError
from skillret.scoring.names import MAX_CUTOFF, MAX_RELEVANCE_LEVEL, Metric, parse_metric
from skillret.scoring.profiles import MAX_ROUNDING, Profile, resolve_profiles

ROOT = Path(__file__).resolve().parents[2]
QRELS = {"q1": {"A": 1, "B": 2}, "q2": {"C": 1}}
RUN = {"q1": {"A": 2.0, "X": 1.0}, "q2": {"C": 1.0}}


def test_largest_cutoff_and_level_are_accepted():
    assert parse_metric(f"NDCG@{MAX_CUTOFF}") == Metric("NDCG", MAX_CUTOFF)
    assert parse_metric(f"P(rel={MAX_RELEVANCE_LEVEL})@0005") == \
        Metric("Precision", 5, MAX_RELEVANCE_LEVEL)
    got = skillret.evaluate(QRELS, RUN, Profile("deep", (f"Recall@{MAX_CUTOFF}",)))
    assert got == {f"Recall@{MAX_CUTOFF}": 0.75}  # (1/2 + 1) / 2: B is never retrieved


@pytest.mark.parametrize("name, problem", [
    (f"NDCG@{MAX_CUTOFF + 1}", "cutoff of 'NDCG@10001' must be an integer from 1 to 10,000"),
    ("NDCG@1000000000000", "cutoff of 'NDCG@1000000000000' must be an integer from 1 to 10,000"),
    ("Recall@0", "cutoff of 'Recall@0' must be"),
    ("MRR(rel=0)@5", "relevance level of 'MRR(rel=0)@5' must be an integer from 1"),
    (f"MRR(rel={MAX_RELEVANCE_LEVEL + 1})@5", "relevance level of"),
])
def test_cutoffs_and_levels_out_of_range_are_refused_naming_the_metric(name, problem):
    with pytest.raises(ConfigError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_metric(name)


def test_a_cutoff_with_a_million_digits_is_refused_at_once():
    name = "NDCG@" + "9" * 1_000_000  # int() would refuse it past 4,300 digits with a traceback
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="must be an integer from 1 to 10,000"):
        parse_metric(name)
    with pytest.raises(ConfigError, match="relevance level"):
        parse_metric("NDCG@5", rel="9" * 1_000_000)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("spec, problem", [
    ({"metrics": ["NDCG@1000000000000"]}, "cutoff of 'NDCG@1000000000000'"),
    ({"metrics": {"NDCG": [10, 10 ** 12]}}, "cutoff of 'NDCG@1000000000000'"),
    ({"metrics": ["NDCG@10"], "rounding": 10 ** 9}, f"rounding must be an integer from 0 to "
                                                    f"{MAX_ROUNDING}"),
    ({"metrics": ["NDCG@10"], "rounding": True}, "rounding must be an integer"),
    ({"metrics": ["NDCG@10"], "relevance_level": True}, "relevance_level must be an integer"),
    ({"metrics": ["NDCG@10"], "relevance_level": 2.0}, "relevance_level must be an integer"),
    ({"metrics": ["NDCG@10", "P(rel=2)@5"]}, "sets its own relevance level"),
])
def test_define_is_checked_before_any_work(spec, problem):
    with pytest.raises(ConfigError, match=problem.replace("(", r"\(")):
        resolve_profiles(["mine"], define={"mine": spec})


#: ``python -m skillret.cli ARGS`` in a process of its own (forked: tests/cli_server.py)
cli = cli_server.run


def one_line(result, *fragments):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


HUGE = "eval:\n  profiles: [deep]\n  define:\n    deep: {metrics: [NDCG@1000000000000]}\n"


def test_cli_refuses_a_huge_cutoff_in_one_line_naming_the_params_file(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 A 1\n")
    (tmp_path / "run.trec").write_text("q1 Q0 A 1 1.0 r\n")
    (tmp_path / "params.yaml").write_text(HUGE)
    for command in ("score", "validate"):
        result = cli(command, "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
                     "--params", tmp_path / "params.yaml")
        one_line(result, f"{tmp_path / 'params.yaml'}: eval.define: profile 'deep'",
                 "cutoff of 'NDCG@1000000000000' must be an integer from 1 to 10,000")
    one_line(cli("profiles", "--params", tmp_path / "params.yaml"), "params.yaml: eval.define")
    one_line(cli("score", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
                 "--relevance-level", 10 ** 30), "relevance_level must be an integer from 1")
    assert not list(tmp_path.glob("*.json"))


def test_score_stage_refuses_a_huge_cutoff_before_reading_anything(tmp_path):
    """The pipeline's score stage once grew to 23 GiB on this; now it stops under 1 GiB."""
    (tmp_path / "params.yaml").write_text(HUGE + "runs:\n  r: run.trec\nrun_options:\n  r: {}\n")
    limit = 1 << 30
    script = (f"import resource, runpy, sys; "
              f"resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit})); "
              f"sys.argv = ['score.py', 'r']; sys.path.insert(0, {str(ROOT)!r}); "
              f"runpy.run_module('stages.score', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                            text=True)
    one_line(result, "params.yaml: eval.define: profile 'deep': cutoff of 'NDCG@1000000000000'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["params.yaml"]


@pytest.mark.parametrize("k_values", [(5.5,), (5, 10.0), (0,), (-3,), (True,), ("5",),
                                      (10 ** 12,), (MAX_CUTOFF + 1,), 5, "5", (np.float64(5),)])
def test_trec_eval_takes_positive_integer_cutoffs_only(k_values):
    with pytest.raises(ConfigError, match="k_values"):
        skillret.trec_eval(QRELS, RUN, k_values=k_values)


def test_trec_eval_accepts_any_integer_type_and_repeats():
    want = skillret.trec_eval(QRELS, RUN, k_values=(1, 5))
    assert skillret.trec_eval(QRELS, RUN, k_values=[np.int64(1), 5, 1]) == want
    assert skillret.trec_eval(QRELS, RUN, k_values=range(1, 6, 4)) == want
    assert skillret.trec_eval(QRELS, RUN, k_values=()) == {}
