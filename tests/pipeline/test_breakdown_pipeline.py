"""The breakdown in the sample pipeline, driven with real git and dvc in a temporary directory:
the metrics files carry it (as the command line writes it given params.yaml), validation counts
what it cannot place, and `dvc plots show` draws every run side by side. (The README's commands,
`dvc metrics diff` per stratum included, run in tests/test_readme.py.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import sample_pipeline as sample
import yaml

ROOT = Path(__file__).resolve().parents[2]
HOME: list[Path] = []  # the module's home, set by its project fixture

pytestmark = pytest.mark.pipeline


def sh(cwd: Path, command: str) -> str:
    return sample.shell(cwd, command, HOME[0] if HOME else None)


@pytest.fixture(scope="module")
def project(sample_pipeline, tmp_path_factory) -> Path:
    """The sample pipeline committed on main and reproduced (the session's,
    tests/sample_pipeline.py), copied for this module."""
    home = tmp_path_factory.mktemp("home")
    HOME[:] = [home]
    return sample.copy(sample_pipeline.path, tmp_path_factory.mktemp("breakdown") / "project")


def test_metrics_files_carry_the_breakdown_of_the_chosen_profile(project):
    metrics = json.loads((project / "metrics/runs/bm25-full.json").read_text())
    params = yaml.safe_load((project / "params.yaml").read_text())["eval"]
    assert list(metrics["breakdown"]) == params["breakdown"] == ["n_required", "skill_category"]
    assert params["breakdown_profile"] == "recommended"
    # the command line given the pipeline's params.yaml writes the same metrics file
    out = project / "cli.json"
    sh(project, f"skillret-eval score --qrels data/sample/qrels/test.jsonl "
                f"--run runs/bm25-full.json --params params.yaml -q -o {out}")
    about = {key: metrics.pop(key) for key in ("judgments", "contract", "judged")}
    assert json.loads(out.read_text()) == metrics
    assert about["judgments"]["queries"] == metrics["queries"]["judged"]
    for strata in metrics["breakdown"].values():
        for row in strata.values():
            assert list(row) == ["queries", "Recall@5", "NDCG@10", "Completeness@5", "MRR@5"]
    # leaf keys without dots, so dvc's flattened names read back unambiguously
    assert not [key for strata in metrics["breakdown"].values() for key in strata if "." in key]


def test_plots_show_draws_every_run_side_by_side(project):
    shown = json.loads(sh(project, "dvc plots show --json"))
    assert not [e for e in shown.get("errors", []) if "breakdown" in e["name"]]
    plot = next(v for k, v in shown["data"].items() if k.endswith("plots/breakdown.json"))[0]
    spec = plot["content"]
    values = spec["data"]["values"]
    assert {v["run"] for v in values} == {"bm25-desc", "bm25-full", "hybrid"}  # fused too
    assert {v["facet"] for v in values} == {"n_required", "skill_category"}
    metrics = json.loads((project / "metrics/runs/bm25-desc.json").read_text())["breakdown"]
    assert [v["value"] for v in values if v["run"] == "bm25-desc" and v["metric"] == "NDCG@10"
            and v["facet"] == "n_required"] == [row["NDCG@10"] for row in
                                                 metrics["n_required"].values()]
    # horizontal bars: a band per stratum, a bar per run and revision in it
    assert spec["spec"]["encoding"]["yOffset"]["field"] == "series"
    assert spec["spec"]["encoding"]["y"]["field"] == "stratum"
    assert spec["spec"]["encoding"]["x"]["field"] == "value"


def test_validation_counts_what_the_breakdown_cannot_place(project, tmp_path):
    report = json.loads((project / "reports/validation/bm25-full.json").read_text())
    assert report["facet_files"] == {"skills": {
        "path": "data/sample/skills/test.jsonl", "relevant_skills": 128, "missing": 0,
        "examples": []}}
    # a skills file without one relevant skill: a warning, and its queries under (missing)
    copy = tmp_path / "project"
    shutil.copytree(project, copy, symlinks=True)
    lines = (copy / "data/sample/skills/test.jsonl").read_text().splitlines(keepends=True)
    qrels = (copy / "data/sample/qrels/test.jsonl").read_text()
    dropped = next(json.loads(line)["id"] for line in lines if json.loads(line)["id"] in qrels)
    (copy / "data/sample/skills/fewer.jsonl").write_text(
        "".join(line for line in lines if json.loads(line)["id"] != dropped))
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["data"]["skills"] = "data/sample/skills/fewer.jsonl"
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    sh(copy, "dvc repro -q score@bm25-full")   # the run read below, and what it needs
    report = json.loads((copy / "reports/validation/bm25-full.json").read_text())
    assert report["facet_files"]["skills"]["missing"] == 1
    assert report["facet_files"]["skills"]["examples"] == [dropped]
    assert any("1 of 128 relevant skills have no row" in w for w in report["warnings"])
    metrics = json.loads((copy / "metrics/runs/bm25-full.json").read_text())
    assert metrics["breakdown"]["skill_category"]["(missing)"]["queries"] >= 1


def test_compare_stage_tests_within_the_strata_of_eval_breakdown(project):
    compare = json.loads((project / "metrics/compare.json").read_text())
    metrics = json.loads((project / "metrics/runs/bm25-desc.json").read_text())["breakdown"]
    assert list(compare["breakdown"]) == list(metrics)
    for facet, strata in compare["breakdown"].items():
        assert list(strata) == list(metrics[facet])
        for stratum, cell in strata.items():
            assert cell["queries"] == metrics[facet][stratum]["queries"]  # recommended: all
            test = cell["runs"]["bm25-desc"]["NDCG@10"]                    # judged queries
            assert test["run"] == metrics[facet][stratum]["NDCG@10"]
            assert test["p_adjusted"] >= test["p_randomization"]
