"""The pull request workflow (.github/workflows/skillret-report.yml) runs as the file says.

The session's ``sample_revisions`` (tests/sample_pipeline.py: the sample pipeline with a
local directory as its DVC remote, `main` reproduced and pushed, then a branch `low-k1`, BM25's
k1 from 1.5 to 0.9, reproduced and pushed) is the pull request. In a fresh clone of the branch, the workflow's `run:`
steps execute in order, in a virtualenv of their own (so `pip install -e` installs the clone;
a second pull request in the same virtualenv, the same package, skips it), with the GitHub values of their `env:` given. The steps that need GitHub have a local
equivalent: the checkout action is the clone, setup-python is this Python, and the step that
would post the comment is replaced by reading the body file it names, which is checked.
The `report`, `queries` and `compare` commands across the two revisions run here too.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from readme_harness import ROOT, environment, make_venv

WORKFLOW = ROOT / ".github" / "workflows" / "skillret-report.yml"
DVC = "dvc"                         # environment(): the DVC server's, first on PATH
GITHUB = {"github.base_ref": "main", "github.token": "unused-in-the-test",
          "github.event.pull_request.number": "22"}
EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")

pytestmark = pytest.mark.pipeline


def sh(cwd: Path, command: str, env: dict) -> subprocess.CompletedProcess:
    result = subprocess.run(["bash", "-ec", command], cwd=cwd, capture_output=True, text=True,
                            env=env)
    if result.returncode != 0:
        raise AssertionError(f"{command} failed ({result.returncode}):\n{result.stdout}\n"
                             f"{result.stderr}")
    return result


@pytest.fixture(scope="module")
def project(sample_revisions, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("workflow")
    env = environment(make_venv(tmp / "venv"), tmp)
    # actions/checkout with fetch-depth 0: the branch, with the base branch as origin/main
    sh(tmp, f"git clone -q -b low-k1 {shlex.quote(str(sample_revisions))} clone", env)
    return tmp, env


@pytest.fixture(scope="module")
def pulled(project):
    """The clone with the branch's outputs, as the workflow's pull step leaves it: a test that
    reads the workspace must not rely on the workflow test having run first in its process
    (pytest-xdist may run the tests of this module on different workers, each with its own
    clone)."""
    tmp, env = project
    sh(tmp / "clone", f"{DVC} pull -q", env)
    return project


def steps() -> list[dict]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in trigger
    (job,) = workflow["jobs"].values()
    return job["steps"]


def github_values(mapping: dict) -> dict:
    def value(text):
        return EXPRESSION.sub(lambda m: GITHUB[m.group(1)], str(text))
    return {k: value(v) for k, v in (mapping or {}).items()}


def package_trees(clone: Path) -> str:
    """The git objects of the clone's package and its build file: equal, the same install."""
    return subprocess.run(["git", "rev-parse", "HEAD:skillret", "HEAD:pyproject.toml"], cwd=clone,
                          capture_output=True, text=True, check=True).stdout


def run_workflow(tmp: Path, env: dict, clone: Path):
    """The workflow's steps in order, as GitHub runs them: the names of those run, the comment
    posted, and the last step (the gate)."""
    summary_file = tmp / f"{clone.name}-step-summary.md"
    posted, ran, result = None, [], None
    for step in steps():
        if "uses" in step:  # the local equivalents: the clone is checked out, Python is here
            assert step["uses"].split("@")[0] in ("actions/checkout", "actions/setup-python")
            continue
        command = step["run"]
        ran.append(step.get("name"))
        if step.get("name") == "Install" and (tmp / "installed").exists() \
                and (tmp / "installed").read_text() == package_trees(clone):
            # a second pull request in this virtualenv whose package (the git trees of
            # skillret/ and pyproject.toml) is the one installed already, editable
            assert command == 'pip install -e ".[example]"'
            continue
        if "gh pr comment" in command:
            body = re.search(r"--body-file\s+(\S+)", command).group(1)
            posted = (clone / body).read_text()
            assert github_values(step.get("env"))["PR"] == "22"
            continue
        step_env = {**env, **github_values(step.get("env")),
                    "GITHUB_STEP_SUMMARY": str(summary_file)}
        result = subprocess.run(["bash", "-ec", command], cwd=clone, capture_output=True,
                                text=True, env=step_env)
        if step.get("name") != "Gate":
            assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr}"
        if step.get("name") == "Install":
            (tmp / "installed").write_text(package_trees(clone))
    assert ran == ["Install", "Pull the DVC remote", "Reproduce", "Summary", "Comment", "Gate"]
    assert posted is not None, "no step posts the comment"
    assert summary_file.read_text() == posted
    return posted, result


def test_the_workflow_posts_the_summary(project):
    tmp, env = project
    posted, gate = run_workflow(tmp, env, tmp / "clone")
    assert gate.returncode == 0 and "gate passed" in gate.stdout
    lines = posted.splitlines()
    assert len(lines) < 60
    assert lines[0] == "<!-- skillret-eval report -->"
    assert lines[1] == "### skillret-eval: origin/main → workspace"
    # the k1 change, on bm25-full's NDCG@10 (README: 0.79162 -> 0.78468, 9/74/15)
    row = next(line for line in lines if line.startswith("| bm25-full | NDCG@10 |"))
    assert row.startswith("| bm25-full | NDCG@10 | 0.79162 | 0.78468 | -0.00694 | [")
    assert row.endswith("| 9 / 74 / 15 | no |")
    assert sum(line.startswith("|") for line in lines) == 2 + 3 * 4  # header, rule, 3 runs
    assert "Runs added: none." in posted and "Runs removed: none." in posted


def test_a_worse_pull_request_gets_its_comment_then_fails_the_gate(project, sample_revisions):
    tmp, env = project
    sh(tmp, f"git clone -q -b names-only {shlex.quote(str(sample_revisions))} worse", env)
    posted, gate = run_workflow(tmp, env, tmp / "worse")
    assert "| bm25-full | NDCG@10 | 0.79162 | 0.23767 |" in posted and "**worse**" in posted
    assert gate.returncode == 1
    failed = [line for line in gate.stdout.splitlines() if "gate failed" in line]
    assert failed and failed[0].startswith("skillret-eval: gate failed: bm25-full NDCG@10: ")


def test_summary_values_are_compares(pulled):
    tmp, env = pulled
    clone = tmp / "clone"
    sh(clone, "skillret-eval report --rev origin/main --rev workspace --format json "
              "--output report.json && skillret-eval compare --rev origin/main "
              "--run bm25-full --run bm25-desc --output compare.json", env)
    report = json.loads((clone / "report.json").read_text())["comparison"]
    compared = json.loads((clone / "compare.json").read_text())
    assert report["tests"] == compared["tests"]
    for run in ("bm25-full", "bm25-desc"):
        for metric, theirs in compared["runs"][run].items():
            ours = report["runs"][run][metric]
            # the family differs (the report adds the fused run): all else is equal
            assert {k: v for k, v in ours.items() if k not in ("p_adjusted", "significant")} \
                == {k: v for k, v in theirs.items() if k not in ("p_adjusted", "significant")}
    assert set(report["runs"]) == {"bm25-desc", "bm25-full", "hybrid"}


def test_table_at_a_revision_and_queries_across_revisions(pulled):
    tmp, env = pulled
    clone = tmp / "clone"
    table = sh(clone, "skillret-eval report --rev origin/main --format json", env).stdout
    record = json.loads(table)
    assert [r["name"] for r in record["runs"]] == ["bm25-desc", "bm25-full", "hybrid"]
    assert record["tests"]["family"] == 12
    full = next(r for r in record["runs"] if r["name"] == "bm25-full")
    assert full["values"]["NDCG@10"] == {"value": 0.79162, "best": True,
                                         "beats": ["bm25-desc", "hybrid"]}
    out = sh(clone, "skillret-eval queries --rev origin/main --rev workspace --run bm25-full "
                    "--metric NDCG@10 --worst 15 --best 9 --format json", env).stdout
    changes = json.loads(out)
    assert changes["counts"] == {"better": 9, "unchanged": 74, "worse": 15}
    assert len(changes["losses"]) == 15 and len(changes["gains"]) == 9
    for q in changes["losses"] + changes["gains"]:
        assert q["text"] and q["needed"] and all(s["name"] for s in q["needed"])
    # the compare stage's report of each run against the baseline, in git
    assert sorted(p.name for p in (clone / "reports" / "queries").iterdir()) == [
        "bm25-desc.md", "hybrid.md"]


def test_a_revision_without_outputs_is_one_line(project):
    tmp, env = project
    result = subprocess.run(["bash", "-c", "skillret-eval report --rev no-such-branch"],
                            cwd=tmp / "clone", capture_output=True, text=True, env=env)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "no-such-branch" in result.stderr
