"""The grid workflow (.github/workflows/skillret-grid.yml) runs as the file says, across machines.

The sample project (the session's ``sample_pipeline``) gets a local directory as its DVC remote
and a local bare repository as its git remote, both pushed. Each point of the `experiment` job's
matrix runs that job's `run:` steps, in order, in a clone of its own (two clones standing in for
two runners, at the same time), with its `${{ matrix.* }}` values; then the `gather` job's steps
run in a fresh clone, and its comment step is replaced by reading the body file it names. The
steps that need GitHub have a local equivalent: the checkout action is the clone (one commit
deep, as the action makes it), setup-python is this Python, whose tools are on PATH, so the
`Install` steps are skipped (the stages import the clone's own skillret). Meanwhile the same grid
runs queued on one machine (`dvc exp run --queue`, then `dvc exp run --run-all`) in another
clone: the gathered `dvc exp show --json` must equal the queued one on everything but names,
commits and times (params, metrics, and the hashes of every dependency and output); and a
package change that raises, queued first and then reverted in the workspace, fails there with
its own error: each queued experiment runs its own code.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import dvc_server
import yaml

import sample_pipeline as sample

WORKFLOW = sample.ROOT / ".github" / "workflows" / "skillret-grid.yml"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")
GITHUB = {"github.token": "unused-in-the-test", "github.event.pull_request.number": "30"}
LOCAL_EQUIVALENTS = ("actions/checkout", "actions/setup-python")
INSTALL = 'pip install -e ".[example]"'


def environment(home: Path) -> dict:
    path = dvc_server.path(f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return {**os.environ, **sample.GIT_ENV, "PATH": path, "HOME": str(home),
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")}


def sh(cwd: Path, command: str, env: dict) -> str:
    result = subprocess.run(["bash", "-ec", command], cwd=cwd, capture_output=True, text=True,
                            env=env)
    if result.returncode != 0:
        raise AssertionError(f"{command} failed ({result.returncode}) in {cwd}:\n"
                             f"{result.stdout}\n{result.stderr}")
    return result.stdout


def jobs() -> dict:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "workflow_dispatch" in trigger and trigger["pull_request"]["types"] == ["labeled"]
    assert set(workflow["jobs"]) == {"experiment", "gather"}
    assert workflow["jobs"]["gather"]["needs"] == "experiment"
    return workflow["jobs"]


def points(job: dict) -> list[dict]:
    """The matrix expanded: every combination of its keys' values, as GitHub forms them."""
    matrix = job["strategy"]["matrix"]
    assert not {"include", "exclude"} & set(matrix)
    keys = list(matrix)
    return [{f"matrix.{k}": str(v) for k, v in zip(keys, values)}
            for values in itertools.product(*(matrix[k] for k in keys))]


def run_job(job: dict, clone: Path, env: dict, values: dict, summary: Path) -> tuple[list, str]:
    """The job's steps in order in ``clone``: the names of the steps run, and the body of the
    comment its posting step would post (None without one)."""
    def github(mapping):
        return {k: EXPRESSION.sub(lambda m: values[m.group(1)], str(v))
                for k, v in (mapping or {}).items()}

    ran, posted = [], None
    for step in job["steps"]:
        if "uses" in step:
            assert step["uses"].split("@")[0] in LOCAL_EQUIVALENTS
            continue
        command = step["run"]
        assert "${{" not in command, "a GitHub value outside `env:`"
        if step.get("name") == "Install":
            assert command == INSTALL
            continue
        if "gh pr comment" in command:
            assert step["if"] == "github.event_name == 'pull_request'"
            assert github(step.get("env"))["PR"] == GITHUB["github.event.pull_request.number"]
            posted = (clone / re.search(r"--body-file\s+(\S+)", command).group(1)).read_text()
            continue
        sh(clone, command,
           {**env, **github(step.get("env")), "GITHUB_STEP_SUMMARY": str(summary)})
        ran.append(step["name"])
    return ran, posted


def experiments(shown: list) -> list[str]:
    """`dvc exp show --json`'s experiments, without their names, commits and times: sorted."""
    kept = ("params", "metrics", "deps", "outs")
    return sorted(json.dumps({k: rev["data"][k] for k in kept}, sort_keys=True)
                  for baseline in shown for experiment in baseline.get("experiments") or []
                  for rev in experiment["revs"])


def run_grid(reproduced: Path, tmp: Path) -> dict:
    (tmp / "home").mkdir()
    env = environment(tmp / "home")
    project = sample.copy(reproduced, tmp / "project")
    dvc = "dvc"                     # the DVC server's, first on PATH
    sh(project, f"{dvc} remote add -d store {tmp / 'dvc-remote'} && git add .dvc/config && "
                f"git commit -qm 'the DVC remote' && {dvc} push -q", env)
    sh(tmp, "git clone -q --bare project origin.git", env)
    checkout = f"--depth 1 file://{tmp / 'origin.git'}"     # actions/checkout: one commit
    workflow = jobs()
    grid_points = points(workflow["experiment"])
    names = [f"k1-{p['matrix.k1']}" for p in grid_points]
    assert len(grid_points) == 2

    def runner(n: int, values: dict):
        clone = tmp / f"runner-{n}"
        sh(tmp, f"git clone -q {checkout} {clone.name}", env)
        return run_job(workflow["experiment"], clone, env, {**GITHUB, **values},
                       tmp / f"summary-{n}.md")

    def queued():       # the same grid on one machine, from the same commit
        sh(tmp, "git clone -q origin.git queued", env)
        # first in the queue, a package change that raises, queued and then reverted in the
        # workspace: the queue runs each experiment's own code
        sh(tmp / "queued", f"{dvc} pull -q", env)
        sample.break_package(tmp / "queued")
        sets = [f"{dvc} exp run --queue --name {name} --set-param retrieve.k1={p['matrix.k1']}"
                for name, p in zip(names, grid_points)]
        sh(tmp / "queued", " && ".join([f"{dvc} exp run --queue --name broken",
                                        "git checkout -- skillret", *sets,
                                        f"{dvc} exp run --run-all"]), env)
        return json.loads(sh(tmp / "queued", f"{dvc} exp show --json", env))

    with ThreadPoolExecutor(len(grid_points) + 1) as pool:
        local = pool.submit(queued)
        runs = list(pool.map(runner, range(1, len(grid_points) + 1), grid_points))
        sh(tmp, f"git clone -q {checkout} gather", env)
        gathered = run_job(workflow["gather"], tmp / "gather", env, GITHUB, tmp / "summary.md")
        local_grid = local.result()
    return {"tmp": tmp, "env": env, "names": names, "runs": runs, "gathered": gathered,
            "local": local_grid}


def runners_push_their_experiments(grid):
    tmp, env = grid["tmp"], grid["env"]
    for ran, posted in grid["runs"]:
        assert ran == ["Pull the DVC remote", "Run the experiment", "Push the experiment"]
        assert posted is None
    base = sh(tmp / "origin.git", "git rev-parse main", env).strip()
    refs = sh(tmp / "origin.git", "git for-each-ref --format='%(refname)' refs/exps", env)
    assert refs.split() == [f"refs/exps/{base[:2]}/{base[2:]}/{name}" for name in grid["names"]]


def queued_experiments_run_their_own_code(grid):
    """The broken package queued before the grid fails with its own error; the grid's points,
    queued after it was reverted, succeed (and equal the runners': gathered_equals_queued)."""
    [main] = [rev for rev in grid["local"] if rev.get("name") == "main"]
    states = {exp["name"]: exp["executor"]["state"] for exp in main["experiments"]}
    assert states == {"broken": "failed", **{name: "success" for name in grid["names"]}}
    [broken] = [exp for exp in main["experiments"] if exp["name"] == "broken"]
    assert "broken package" in Path(broken["executor"]["local"]["log"]).read_text()
    main["experiments"].remove(broken)


def gathered_equals_queued(grid):
    tmp, env = grid["tmp"], grid["env"]
    gathered = json.loads(sh(tmp / "gather", "dvc exp show --json", env))
    assert len(experiments(gathered)) == 2
    assert experiments(gathered) == experiments(grid["local"])
    k1 = sorted(json.loads(e)["params"]["params.yaml"]["data"]["retrieve"]["k1"]
                for e in experiments(gathered))
    assert k1 == [0.9, 1.2]


def comment_shows_the_table_and_each_point_against_the_commit(grid):
    tmp, env = grid["tmp"], grid["env"]
    ran, posted = grid["gathered"]
    assert ran == ["Pull the experiments", "Summary"]
    assert posted is not None, "no step posts the comment"
    assert (tmp / "summary.md").read_text() == posted
    base = sh(tmp / "gather", "git rev-parse --short=7 HEAD", env).strip()
    lines = posted.splitlines()
    assert lines[:2] == ["<!-- skillret-eval grid -->",
                         f"### skillret-eval grid: 2 experiments of {base}"]
    # dvc exp show: the baseline then each experiment, the columns that differ, no deps
    table = list(itertools.takewhile(lambda line: line.startswith("|"), lines[3:]))
    head = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert head[0] == "Experiment" and "retrieve.k1" in head and "bm25-full.NDCG@10" in head
    assert not any("/" in cell or cell == "Created" for cell in head)
    rows = {row[0]: row for row in ([c.strip() for c in line.strip("|").split("|")]
                                    for line in table[2:])}
    assert len(rows) == 3 and all(len(line) <= 200 for line in table)
    k1, ndcg = head.index("retrieve.k1"), head.index("bm25-full.NDCG@10")
    by_name = {name.split("[")[-1].rstrip("]"): (row[k1], row[ndcg])
               for name, row in rows.items()}
    assert by_name == {"main": ("1.5", "0.79162"), "k1-0.9": ("0.9", "0.78468"),
                       "k1-1.2": ("1.2", "0.79018")}
    # a report per point, folded: k1=0.9 is test_workflow.py's branch (9/74/15 on NDCG@10)
    folds = re.findall(r"<details><summary>(\S+) against (\w+)</summary>\n\n(.*?)\n</details>",
                       posted, re.S)
    assert [(name, commit) for name, commit, _ in folds] == [(n, base) for n in grid["names"]]
    reports = {name: body for name, _, body in folds}
    assert reports["k1-0.9"].splitlines()[1] == "### skillret-eval: HEAD → k1-0.9"
    row = next(line for line in reports["k1-0.9"].splitlines()
               if line.startswith("| bm25-full | NDCG@10 |"))
    assert row.startswith("| bm25-full | NDCG@10 | 0.79162 | 0.78468 | -0.00694 | [")
    assert row.endswith("| 9 / 74 / 15 | no |")


@pytest.mark.pipeline
def test_the_grid_across_runners_is_the_local_queued_grid(sample_pipeline, tmp_path):
    """One test (not a module fixture shared by several): pytest-xdist would build the grid once
    per worker that runs one of them."""
    grid = run_grid(sample_pipeline.path, tmp_path)
    runners_push_their_experiments(grid)
    queued_experiments_run_their_own_code(grid)
    gathered_equals_queued(grid)
    comment_shows_the_table_and_each_point_against_the_commit(grid)


def test_docs_ci_shows_the_grid_workflow_file():
    docs = (sample.ROOT / "docs" / "ci.md").read_text()
    assert f"```yaml\n{WORKFLOW.read_text()}```" in docs
