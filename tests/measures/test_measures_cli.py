"""The measures on the command line, driven as a user drives them: `skillret-eval score
--metric NAME ...` (as `trec_eval -m` and `ir_measures qrels run 'nDCG@10 P@5'` take names) and
`skillret-eval measures` (as `trec_eval -h` lists its measures)."""

from __future__ import annotations

import json

import cli_server
import pytest

from skillret.measures import registry

QRELS = "q1 0 A 1\nq1 0 B 1\nq1 0 C 1\nq2 0 D 2\nq3 0 E 1\n"
RUN = ("q1 Q0 X 1 5.0 r\nq1 Q0 A 2 4.0 r\nq1 Q0 Y 3 3.0 r\nq1 Q0 C 4 2.0 r\nq1 Q0 Z 5 1.0 r\n"
       "q2 Q0 D 1 1.0 r\n")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    return tmp_path


def score(files, *args):
    out = files / "m.json"
    result = cli_server.run("score", "--qrels", files / "qrels.txt", "--run",
                            files / "run.trec", "-o", out, *args)
    return result, (json.loads(out.read_text()) if result.returncode == 0 else None)


def test_metrics_alone_under_any_tools_name_show_canonical_names(files):
    result, metrics = score(files, "--metric", "Success@1", "--metric", "Rprec", "--metric",
                            "judged_5", "--metric", "bpref", "--metric", "hit_rate@5")
    assert result.returncode == 0, result.stderr
    assert list(metrics) == ["metrics", "queries"]     # no official profile beside them
    # q1 ranks X A Y C Z (A, B, C relevant), q2 ranks D (relevant); q3 is not in the run
    assert metrics["metrics"] == {"Success@1": 0.5,            # q2 only
                                  "RPrec": 0.66667,            # (1/3 + 1/1) / 2
                                  "Judged@5": 0.7,             # (2/5 + 1/1) / 2
                                  "Bpref": 0.83333,            # (2/3 + 1) / 2: no non-relevant
                                  "Success@5": 1.0}
    assert metrics["queries"]["evaluated"] == {"metrics": 2}   # run-judged by default
    assert "Success" in result.stdout and "whole" in result.stdout


def test_metrics_beside_a_profile_leave_its_numbers_as_they_are(files):
    _, alone = score(files, "--profile", "official")
    result, both = score(files, "--profile", "official", "--metric", "nDCG@10",
                         "--metric", "NDCG", "--query-set", "all-judged")
    assert result.returncode == 0, result.stderr
    assert both["official"] == alone["official"]
    assert list(both["metrics"]) == ["NDCG@10", "NDCG"]
    assert both["queries"]["evaluated"] == {"official": 2, "metrics": 3}   # q3 scores 0
    assert abs(both["metrics"]["NDCG@10"] - alone["official"]["NDCG@10"] * 2 / 3) < 1e-5


def test_a_level_in_a_name_gets_a_profile_of_its_own(files):
    result, metrics = score(files, "--metric", "P@1", "--metric", "P(rel=2)@1")
    assert result.returncode == 0, result.stderr
    assert metrics["metrics"] == {"Precision@1": 0.5}
    assert metrics["metrics(rel=2)"] == {"Precision@1": 0.5}   # q2's D has grade 2


@pytest.mark.parametrize("name, problem", [
    ("hits@5", "ambiguous"), ("RPrec@5", "takes no cutoff"), ("NDGC@10", "unknown measure"),
])
def test_a_bad_metric_is_one_line_and_writes_nothing(files, name, problem):
    result, _ = score(files, "--metric", name)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and problem in result.stderr
    assert not (files / "m.json").exists()


def test_help_states_the_query_set_default():
    from skillret.cli import build_parser

    helps = {a.dest: a.help for sub in build_parser("score")._subparsers._group_actions
             for p in sub.choices.values() for a in p._actions}
    assert "default: run-judged" in helps["query_set"] and "Success@1" in helps["metric"]
    assert "--metric NAME" in cli_server.run("score", "--help").stdout


def test_measures_lists_every_measure_and_its_names():
    result = cli_server.run("measures")
    assert result.returncode == 0, result.stderr
    for row in registry.catalogue():
        assert row["forms"][0] in result.stdout
        for names in row["tools"].values():
            assert all(name in result.stdout for name in names)
    assert "computed by SkillRet's official evaluator" in result.stdout
    assert max(map(len, result.stdout.splitlines())) <= 100
    listed = cli_server.run("measures", "--format", "json")
    assert json.loads(listed.stdout) == registry.catalogue()


def test_the_catalogue_says_what_the_official_evaluator_computes():
    rows = {row["name"]: row for row in registry.catalogue()}
    assert [n for n, row in rows.items() if row["official"]] == list(registry.names("official"))
    assert rows["NDCG"]["forms"] == ["NDCG@K", "NDCG"] and rows["RPrec"]["forms"] == ["RPrec"]
    assert rows["Success"]["tools"] == {"trec_eval": ["success_K"],
                                        "ir_measures": ["Success@K"], "ranx": ["hit_rate@K"]}
    assert all(row["summary"] and "\n" not in row["summary"] for row in rows.values())
