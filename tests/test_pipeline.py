"""The pipeline as a researcher uses it: real git and real dvc in a temporary directory.

One module-level fixture builds a project (this repository's pipeline files, package and sample
data), commits it and runs ``dvc repro`` once; each test then works on its own copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILES = ["dvc.yaml", "params.yaml", "stages", "skillret", "data", ".dvcignore",
                 ".gitignore"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "skillret tests", "GIT_AUTHOR_EMAIL": "tests@skillret.invalid",
    "GIT_COMMITTER_NAME": "skillret tests", "GIT_COMMITTER_EMAIL": "tests@skillret.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "DVC_NO_ANALYTICS": "1",
}

pytestmark = pytest.mark.pipeline


def run(cwd: Path, *args: str, check: bool = True, env: dict | None = None):
    result = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, **GIT_ENV, **(env or {})})
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({result.returncode}):\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


def dvc(cwd: Path, *args: str, check: bool = True):
    return run(cwd, sys.executable, "-m", "dvc", *args, check=check)


def git(cwd: Path, *args: str, check: bool = True):
    return run(cwd, "git", *args, check=check)


def stages_run(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


def set_params(repo: Path, update) -> None:
    path = repo / "params.yaml"
    params = yaml.safe_load(path.read_text())
    update(params)
    path.write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.fixture(scope="module")
def origin(tmp_path_factory) -> Path:
    """A committed project with the sample pipeline reproduced once."""
    home = tmp_path_factory.mktemp("home")  # no user git config leaks into the tests
    GIT_ENV.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"))
    repo = tmp_path_factory.mktemp("origin")
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, repo / name)
    git(repo, "init", "-q", "-b", "main")
    dvc(repo, "init", "-q")
    dvc(repo, "config", "core.analytics", "false")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "project")
    # "repro from a clean clone succeeds"
    clone = tmp_path_factory.mktemp("clone") / "project"
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    result = dvc(clone, "repro")
    assert stages_run(result.stdout) == {
        "retrieve@bm25-desc", "retrieve@bm25-full", "normalize_qrels", "validate@bm25-desc",
        "validate@bm25-full", "score@bm25-desc", "score@bm25-full"}
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "repro")
    return clone


@pytest.fixture
def repo(origin, tmp_path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(origin, copy, symlinks=True)
    return copy


def metrics(repo: Path, run_name: str) -> dict:
    return json.loads((repo / "metrics" / "runs" / f"{run_name}.json").read_text())


def test_clean_clone_reproduces_every_profile(origin):
    for name in ("bm25-desc", "bm25-full"):
        scores = metrics(origin, name)
        assert list(scores) == ["official", "mia5150", "recommended", "queries"]
        assert scores["queries"]["judged"] == 98 and scores["queries"]["in_both"] == 98
        assert 0.3 < scores["official"]["NDCG@10"] < 0.95
        assert (origin / "build" / "per_query" / f"{name}.tsv").is_file()
        contract = json.loads((origin / "metrics" / "runs" / f"{name}.contract.json").read_text())
        assert contract["tie_rule"].startswith("score descending")
        assert len(contract["qrels"]["sha256"]) == 64
    assert metrics(origin, "bm25-full")["official"] != metrics(origin, "bm25-desc")["official"]


def test_pipeline_numbers_equal_the_official_function(origin):
    pytest.importorskip("pytrec_eval")
    sys.path.insert(0, str(ROOT / "tests"))
    import reference

    qrels: dict = {}
    for line in (origin / "data/sample/qrels/test.jsonl").read_text().splitlines():
        row = json.loads(line)
        qrels.setdefault(row["query_id"], {})[row["skill_id"]] = row["relevance"]
    for name in ("bm25-desc", "bm25-full"):
        results = json.loads((origin / "runs" / f"{name}.json").read_text())["retrieval"]["test"]
        assert metrics(origin, name)["official"] == reference.official_trec_eval(qrels, results)


def test_second_repro_runs_nothing(repo):
    before = {p: p.read_bytes() for p in (repo / "metrics").rglob("*.json")}
    result = dvc(repo, "repro")
    assert stages_run(result.stdout) == set()
    assert {p: p.read_bytes() for p in (repo / "metrics").rglob("*.json")} == before


def test_adding_a_run_runs_only_its_stages(repo):
    # a run in another format: the BM25 results as a TREC file
    results = json.loads((repo / "runs" / "bm25-desc.json").read_text())["retrieval"]["test"]
    lines = [f"{q} Q0 {s} {r} {score!r} mine"
             for q, ranking in results.items()
             for r, (s, score) in enumerate(ranking.items(), 1)]
    (repo / "data" / "mine.trec").write_text("\n".join(lines) + "\n")
    set_params(repo, lambda p: p["runs"].update({"mine": "data/mine.trec"}))
    result = dvc(repo, "repro")
    assert stages_run(result.stdout) == {"validate@mine", "score@mine"}
    assert metrics(repo, "mine")["official"] == metrics(repo, "bm25-desc")["official"]


def test_changing_one_run_changes_only_its_metrics(repo):
    full_before = (repo / "metrics/runs/bm25-full.json").read_bytes()
    desc_before = (repo / "metrics/runs/bm25-desc.json").read_bytes()
    set_params(repo, lambda p: p["retrieve"]["configs"]["bm25-desc"].update(
        fields=["name", "description", "skill_md"]))
    result = dvc(repo, "repro")
    assert stages_run(result.stdout) == {"retrieve@bm25-desc", "validate@bm25-desc",
                                         "score@bm25-desc"}
    assert (repo / "metrics/runs/bm25-full.json").read_bytes() == full_before
    assert (repo / "metrics/runs/bm25-desc.json").read_bytes() != desc_before


def test_metrics_diff_between_branches(repo):
    before = metrics(repo, "bm25-full")["official"]["NDCG@10"]
    git(repo, "checkout", "-qb", "low-k1")
    set_params(repo, lambda p: p["retrieve"].update(k1=0.6))
    dvc(repo, "repro")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "k1=0.6")
    diff = dvc(repo, "metrics", "diff", "main", "--json")
    changes = json.loads(diff.stdout)
    assert "official.NDCG@10" in changes["metrics/runs/bm25-full.json"]
    change = changes["metrics/runs/bm25-full.json"]["official.NDCG@10"]
    after = metrics(repo, "bm25-full")["official"]["NDCG@10"]
    assert after != before
    assert (change["old"], change["new"]) == (before, after)
    table = dvc(repo, "metrics", "diff", "main").stdout
    assert "official.NDCG@10" in table and "contract" not in table


def test_experiment_on_a_bm25_parameter(repo):
    committed = metrics(repo, "bm25-full")["official"]  # k1 = 1.5
    dvc(repo, "exp", "run", "-S", "retrieve.k1=1.2", "-n", "k1-1.2")
    shown = json.loads(dvc(repo, "exp", "show", "--json").stdout)
    main = next(rev for rev in shown if rev.get("name") == "main")
    runs = {exp["name"]: exp["revs"][0]["data"] for exp in main["experiments"]}
    data = runs["k1-1.2"]
    assert data["params"]["params.yaml"]["data"]["retrieve"]["k1"] == 1.2
    scores = data["metrics"]["metrics/runs/bm25-full.json"]["data"]
    assert set(scores) == {"official", "mia5150", "recommended", "queries"}
    assert scores["official"] != committed  # k1 changed the run
    assert scores["official"] == metrics(repo, "bm25-full")["official"]  # applied to workspace


def test_plots_show_writes_html(repo):
    dvc(repo, "plots", "show", "-o", "plots_out")
    html = (repo / "plots_out" / "index.html").read_text()
    assert "NDCG" in html and "Completeness" in html


def test_bad_run_stops_repro_and_keeps_previous_metrics(repo):
    before = (repo / "metrics/runs/bm25-full.json").read_bytes()
    (repo / "data" / "bad.trec").write_text("q-00001 Q0 a 1 1.0 t\nq-00001 Q0 b 2 nan t\n")
    set_params(repo, lambda p: p["runs"].update({"bm25-full": "data/bad.trec"}))
    result = dvc(repo, "repro", check=False)
    assert result.returncode != 0
    assert "data/bad.trec:2: score 'nan' is not a finite number" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert (repo / "metrics/runs/bm25-full.json").read_bytes() == before


def test_stage_deps_cover_the_modules_each_stage_imports(repo):
    """Every skillret module a stage imports (eagerly or lazily) is one of its deps, so a change
    to it reruns the stage. Found with `python -X importtime`, running the real commands."""
    lock = yaml.safe_load((repo / "dvc.lock").read_text())["stages"]
    for name, stage in lock.items():
        result = subprocess.run(f"{sys.executable} -X importtime {stage['cmd'][len('python '):]}",
                                shell=True, cwd=repo, capture_output=True, text=True)
        assert result.returncode == 0, (name, result.stderr[-500:])
        modules = set(re.findall(r"\|\s+(skillret(?:\.\w+)*)\s*$", result.stderr, re.M))
        deps = [d["path"] for d in stage["deps"]]
        for module in modules:
            path = module.replace(".", "/")
            candidates = [f"{path}.py", f"{path}/__init__.py"]
            covered = any(c == d or c.startswith(d.rstrip("/") + "/") for c in candidates
                          for d in deps)
            if module == "skillret":
                continue  # the package's __init__ only holds the version and lazy names
            assert covered, f"stage {name} imports {module} but does not depend on it"
