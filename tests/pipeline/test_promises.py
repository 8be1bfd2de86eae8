"""The pipeline's promises, as a user meets them with real git and dvc: a failing stage
replaces nothing, an unregistered run leaves nothing behind, mistakes are named when made."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import dvc_server
import sample_pipeline as sample
import yaml

pytestmark = pytest.mark.pipeline


def run(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    home = cwd.parent / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, **sample.GIT_ENV, "HOME": str(home),
           "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")}
    result = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({result.returncode}):\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


def dvc(cwd: Path, *args: str, check: bool = True):
    return run(cwd, *dvc_server.command(), *args, check=check)


def git(cwd: Path, *args: str) -> str:
    return run(cwd, "git", *args).stdout


def skillret_eval(cwd: Path, *args: str, check: bool = True):
    return run(cwd, sys.executable, "-m", "skillret.cli", *args, check=check)


def files(project: Path) -> dict[str, str]:
    """Every file of the project but git's and DVC's own: path -> sha256."""
    out = {}
    for path in project.rglob("*"):
        relative = path.relative_to(project).as_posix()
        if path.is_file() and not relative.startswith((".git/", ".dvc/")) \
                and "__pycache__" not in relative:
            out[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def outputs(lock: dict, stage: str) -> list[str]:
    return [out["path"] for out in lock["stages"].get(stage, {}).get("outs", [])]


def edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


#: stage -> (the file a user gets wrong, how): a bad value or a missing file per stage
BREAKS = {
    "inputs": ("params.yaml", lambda t: edit(t, "qrels/test.jsonl", "qrels/gone.jsonl")),
    "retrieve@bm25-desc": ("params.yaml", lambda t: edit(t, "top_k: 100", "top_k: 0")),
    "normalize_qrels": ("data/sample/qrels/test.jsonl", lambda t: t + "not json\n"),
    "settings": ("params.yaml", lambda t: edit(t, "  headline: [", "  headlin: [")),
    "score@bm25-full": ("params.yaml", lambda t: edit(t, "bm25-full: {}",
                                                      "bm25-full: {format: trec}")),
    "fuse_inputs@hybrid": ("params.yaml", lambda t: edit(t, "bm25-full]}", "bm25-full], k: -1}")),
    "fuse@hybrid": ("stages/fuse.py", lambda t: "raise SystemExit('fuse: error: broken')\n"),
    "score_fused@hybrid": ("stages/score.py", lambda t: edit(
        t, "\nfrom ", "\nimport sys\nif '--fused' in sys.argv: raise SystemExit(2)\nfrom ")),
    "charts": ("stages/charts.py", lambda t: "raise SystemExit('charts: error: broken')\n"),
    "compare": ("params.yaml", lambda t: edit(t, "alpha: 0.05", "alpha: 2")),
    "plots_page": ("stages/plots_page.py", lambda t: "raise SystemExit('error: broken')\n"),
}


@pytest.mark.parametrize("stage", BREAKS)
def test_a_failing_stage_leaves_every_output_as_it_was(sample_pipeline, tmp_path, stage):
    """Break one stage's input; the failing `dvc repro` changes nothing but the broken file and
    what the stages before it made with success; the failing stage's outputs are all there,
    unchanged. Fixing the input, `dvc repro` gives a clean run's outputs, byte for byte."""
    project = sample.copy(sample_pipeline.path, tmp_path / "project")
    clean, lock = files(project), yaml.safe_load((project / "dvc.lock").read_text())
    broken, change = BREAKS[stage]
    original = (project / broken).read_text()
    (project / broken).write_text(change(original))
    failed = dvc(project, "repro", check=False)
    assert failed.returncode != 0
    assert f"failed to reproduce '{stage}'" in failed.stdout + failed.stderr
    ran = set(re.findall(r"Running stage '([^']+)'", failed.stdout)) - {stage}
    new_lock = yaml.safe_load((project / "dvc.lock").read_text())
    made = [path for done in ran for path in outputs(new_lock, done)]
    changed = {path for path, digest in files(project).items() if clean.get(path) != digest}
    changed |= set(clean) - set(files(project))
    allowed = {broken, "dvc.lock"}
    assert {p for p in changed if p not in allowed
            and not any(p == m or p.startswith(m + "/") for m in made)} == set()
    for path in outputs(lock, stage):
        assert (project / path).exists(), path
    listed = {line[3:] for line in git(project, "status", "--porcelain").splitlines()}
    assert listed <= allowed | {p for p in changed}

    (project / broken).write_text(original)
    dvc(project, "repro")
    assert files(project) == clean
    assert git(project, "status", "--porcelain") == ""


#: what the README's "reproducible for a colleague" recipe commits (its `git add` line)
README_COMMIT = ("results/dense.csv.dvc results/.gitignore .dvc/config params.yaml dvc.lock "
                 "metrics plots reports")


def colleague_clone(origin: Path, target: Path) -> Path:
    """A colleague's fresh clone that has pulled: nothing to reproduce, nothing changed."""
    git(target.parent, "clone", "-q", str(origin), str(target))
    dvc(target, "pull", "-q")
    assert json.loads(dvc(target, "status", "--json").stdout or "{}") == {}
    assert "Running stage" not in dvc(target, "repro").stdout
    assert git(target, "status", "--porcelain") == ""
    return target


def test_a_dvc_tracked_run_reaches_a_colleague_and_unregistering_leaves_nothing_behind(
        sample_pipeline, tmp_path):
    """The README's recipe, as written: `dvc add` the run, register it, set a remote, push,
    commit exactly the files it lists, push to a git remote (a local bare repository). A
    colleague's fresh clone + `dvc pull` has everything: `dvc status` is clean, `dvc repro` runs
    nothing, and the numbers are the same. Then unregister, reproduce, push: a colleague's fresh
    clone pulls and finds nothing to reproduce and nothing changed. `unregister` and deleting the
    two lines by hand end in the same files."""
    project = sample.copy(sample_pipeline.path, tmp_path / "project")
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(project, "remote", "add", "shared", str(origin))
    git(project, "push", "-q", "shared", "main")
    results = json.loads((project / "runs/bm25-desc.json").read_text())["retrieval"]["test"]
    (project / "results").mkdir()
    (project / "results/dense.csv").write_text("".join(
        ["query_id,skill_id,score\n"] + [f"{q},{s},{score!r}\n" for q, ranking in results.items()
                                         for s, score in ranking.items()]))
    dvc(project, "add", "-q", "results/dense.csv")
    skillret_eval(project, "register", "results/dense.csv")
    ran = set(re.findall(r"Running stage '([^']+)'", dvc(project, "repro").stdout))
    assert ran == {"inputs", "settings", "score@dense", "fuse_inputs@hybrid", "charts",
                   "compare"}
    assert (project / "outputs/per_query/dense.tsv").is_file()
    dvc(project, "remote", "add", "-d", "storage", str(tmp_path / "dvc-storage"))
    dvc(project, "push", "-q")
    git(project, "add", *README_COMMIT.split())
    git(project, "commit", "-qm", "Register dense")
    assert git(project, "status", "--porcelain") == ""  # the list left nothing out
    git(project, "push", "-q", "shared", "main")
    colleague = colleague_clone(origin, tmp_path / "colleague")
    assert (colleague / "results/dense.csv").read_bytes() == \
        (project / "results/dense.csv").read_bytes()
    assert (colleague / "metrics/runs/dense.json").read_bytes() == \
        (project / "metrics/runs/dense.json").read_bytes()
    assert not [p for p in ("outputs/runs", "outputs/per_query", "outputs/fused")
                if (colleague / p / ".gitignore").exists()]
    by_hand = sample.copy(project, tmp_path / "by-hand")

    out = skillret_eval(project, "unregister", "dense").stdout
    assert out.startswith("dense: unregistered; removed 7 files")
    params = (project / "params.yaml").read_text()
    assert "dense" not in params and "# Register a run" in params  # comments kept
    dvc(project, "repro")
    dvc(project, "push", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "Unregister dense")
    git(project, "push", "-q", "shared", "main")
    for folder in ("outputs/runs", "outputs/per_query", "metrics/runs", "reports/validation",
                   "plots/runs", "reports/queries", "reports/run_settings"):
        assert not [p for p in (project / folder).iterdir() if p.stem == "dense"], folder

    text = (by_hand / "params.yaml").read_text()
    (by_hand / "params.yaml").write_text(re.sub(r"\n  dense: .*", "", text))
    dvc(by_hand, "repro")
    assert files(by_hand) == files(project)
    colleague_clone(origin, tmp_path / "colleague-after")


def test_unregister_refuses_a_run_another_setting_names(sample_pipeline, tmp_path):
    project = sample.copy(sample_pipeline.path, tmp_path / "project")
    for name, key in (("bm25-desc", "fuse.hybrid.runs"), ("nope", "no run named 'nope'")):
        failed = skillret_eval(project, "unregister", name, check=False)
        assert failed.returncode == 2 and key in failed.stderr
        assert len(failed.stderr.splitlines()) == 1
    assert git(project, "status", "--porcelain") == ""


def test_register_checks_the_options_against_the_file(sample_pipeline, tmp_path):
    project = sample.copy(sample_pipeline.path, tmp_path / "project")
    (project / "mine.csv").write_text("request,skill,overlap\nq-00001,s-1,1.5\n")
    for options, message in (
            (["--columns", "query=request,skill=skill,score=score"],
             "mine.csv: has no column 'score'"),
            (["--format", "trec"], "mine.csv:1:"),
            (["--columns", "query=q"], "a json run has none")):
        target = "runs/bm25-desc.json" if "json run" in message else "mine.csv"
        failed = skillret_eval(project, "register", target, *options, check=False)
        assert failed.returncode == 2, failed.stdout
        assert message in failed.stderr and len(failed.stderr.splitlines()) == 1
    assert git(project, "status", "--porcelain") == "?? mine.csv\n"
    skillret_eval(project, "register", "mine.csv", "--columns",
                  "query=request,skill=skill,score=overlap")


@pytest.mark.parametrize("command", [["report"], ["queries", "--run", "a", "--run", "b"]])
def test_a_command_that_needs_a_project_says_when_there_is_none(tmp_path, command):
    failed = skillret_eval(tmp_path, *command, check=False)
    assert failed.returncode == 2
    assert failed.stderr.startswith(f"skillret-eval: error: no params.yaml in {tmp_path}")
    assert "--qrels FILE --run" in failed.stderr and len(failed.stderr.splitlines()) == 1
