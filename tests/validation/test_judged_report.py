"""The validation report's Judged@K: how much of the run's top K carries a judgment, at the
cutoffs of the profiles in use (ir_measures' Judged@K, averaged as the official profile
averages)."""

from __future__ import annotations

import json

import cli_server

from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import Run
from skillret.validation.checks import validate_and_score
from skillret.scoring.names import Metric

QRELS = {"q1": {"A": 1, "B": 0, "C": -1}, "q2": {"D": 2}, "q3": {"E": 1}}
# q1: A B C judged (C negative: judged all the same) among X A Y B Z C; q2 retrieves D alone;
# q3 retrieves nothing judged; q4 has no judgments and is left out
RUN = {"q1": {"X": 6.0, "A": 5.0, "Y": 4.0, "B": 3.0, "Z": 2.0, "C": 1.0}, "q2": {"D": 1.0},
       "q3": {"V": 2.0, "W": 1.0}, "q4": {"A": 1.0}}


def test_judged_at_each_cutoff_over_the_runs_judged_queries():
    report, scored = validate_and_score(Qrels.from_dict(QRELS), Run.from_dict(RUN),
                                        metrics=[Metric("NDCG", 5)], judged_at=[1, 5, 10])
    assert report["judged"] == {"Judged@1": round((0 + 1 + 0) / 3, 5),
                                "Judged@5": round((2 / 5 + 1 + 0) / 3, 5),
                                "Judged@10": round((3 / 6 + 1 + 0) / 3, 5)}
    assert list(scored.values) == [Metric("NDCG", 5)]   # only the metrics asked for


def test_validate_reports_judged_at_the_profiles_cutoffs(tmp_path):
    (tmp_path / "qrels.txt").write_text("".join(
        f"{q} 0 {s} {g}\n" for q, docs in QRELS.items() for s, g in docs.items()))
    (tmp_path / "run.trec").write_text("".join(
        f"{q} Q0 {s} 1 {v} r\n" for q, docs in RUN.items() for s, v in docs.items()))
    (tmp_path / "params.yaml").write_text(
        "eval:\n  profiles: [official, mine]\n  define:\n"
        "    mine: {metrics: [Success@3, RPrec]}\n")
    report = tmp_path / "report.json"
    result = cli_server.run("validate", "--qrels", tmp_path / "qrels.txt", "--run",
                            tmp_path / "run.trec", "--params", tmp_path / "params.yaml",
                            "--report", report)
    assert result.returncode == 0, result.stderr
    assert list(json.loads(report.read_text())["judged"]) == [
        "Judged@3", "Judged@5", "Judged@10", "Judged@15"]
