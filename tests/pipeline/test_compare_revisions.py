"""`skillret-eval compare` across git revisions and the compare stage, with real git and dvc.

The session's ``sample_revisions`` (tests/sample_pipeline.py) is the sample pipeline with a
local directory as its DVC remote: `main` pushed, then a branch `low-k1` where BM25's k1 went
from 1.5 to 0.9, reproduced and pushed. Tests work in fresh clones of it, as a researcher
does. The README's "Is it significant?" commands run here as written.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import dvc_server
import yaml

import sample_pipeline as sample
from readme_harness import ROOT

ENV = {
    "GIT_AUTHOR_NAME": "skillret tests", "GIT_AUTHOR_EMAIL": "tests@skillret.invalid",
    "GIT_COMMITTER_NAME": "skillret tests", "GIT_COMMITTER_EMAIL": "tests@skillret.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "DVC_NO_ANALYTICS": "1",
    # the skillret-eval of this environment, as the README's commands call it
    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
}
DVC = "dvc"                     # sh(): the DVC server's, first on PATH (tests/dvc_server.py)

pytestmark = pytest.mark.pipeline


def sh(cwd: Path, command: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, **ENV, "PATH": dvc_server.path(ENV["PATH"])})
    if check and result.returncode != 0:
        raise AssertionError(f"{command} failed ({result.returncode}):\n{result.stdout}\n"
                             f"{result.stderr}")
    return result


@pytest.fixture(scope="module")
def origin(sample_revisions, tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")  # no user git config leaks into the tests
    ENV.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"))
    return sample_revisions


def clone(origin: Path, tmp_path: Path, branch: str, *, pull: bool = True) -> Path:
    target = tmp_path / f"clone-{branch}"
    sh(tmp_path, f"git clone -q -b {branch} {shlex.quote(str(origin))} {target.name}")
    if pull:
        sh(target, f"{DVC} pull -q")
    return target


@pytest.fixture(scope="module")
def pulled(origin, tmp_path_factory) -> Path:
    """A clone of ``low-k1`` that has pulled its outputs, for the tests that only read it (what
    they write goes to their own folder) and the copies of the tests that change it."""
    return clone(origin, tmp_path_factory.mktemp("pulled"), "low-k1")


def readme_examples() -> list[tuple[str, str]]:
    """(command, quoted output) of each `$ skillret-eval compare` block of the tutorial's
    "Is it significant?" page."""
    section = (ROOT / "docs" / "tutorial" / "significance.md").read_text()
    blocks = re.findall(r"```console\n\$ (skillret-eval compare[^\n]*)\n(.*?)```", section,
                        re.S)
    assert len(blocks) == 2
    return blocks


def test_readme_commands_on_fresh_clones(origin, tmp_path):
    """The section's commands on a fresh clone that has pulled nothing: DVC reads both
    revisions' tables from the remote (tests/test_readme.py runs them in the README's flow)."""
    where = clone(origin, tmp_path, "low-k1", pull=False)
    for command, expected in readme_examples():
        result = sh(where, command)
        assert result.stdout == expected, command


def test_readme_numbers_are_the_issues(pulled, tmp_path):
    sh(pulled, f"skillret-eval compare --rev main --metric NDCG@10 --run bm25-full "
               f"-o {tmp_path / 'out.json'}")
    entry = json.loads((tmp_path / "out.json").read_text())["runs"]["bm25-full"]["NDCG@10"]
    assert entry["delta"] == -0.00694
    assert (entry["wins"], entry["ties"], entry["losses"]) == (9, 74, 15)
    assert round(entry["p_t"], 2) == 0.48 and not entry["significant"]


def test_two_revisions_equal_the_run_files(origin, pulled, tmp_path):
    """Per-query tables read through DVC at two revisions, and the same runs scored from their
    files: the same comparison."""
    main = clone(origin, tmp_path, "main")
    k1 = pulled
    sh(main, "skillret-eval compare --rev main --rev low-k1 --output revs.json")
    revs = json.loads((main / "revs.json").read_text())
    assert revs["baseline"] == "main" and revs["against"] == "low-k1"
    assert list(revs["runs"]) == ["bm25-desc", "bm25-full", "hybrid"]  # the fused run too
    qrels = main / "data/sample/qrels/test.jsonl"
    for name, path in (("bm25-desc", "runs/bm25-desc.json"), ("bm25-full", "runs/bm25-full.json"),
                       ("hybrid", "outputs/fused/hybrid.trec")):
        sh(main, f"skillret-eval compare --qrels {qrels} --run main={main}/{path} "
                 f"--run k1={k1}/{path} --output files.json")
        files = json.loads((main / "files.json").read_text())["runs"]["k1"]
        for metric, entry in files.items():
            # adjusted over 12 pairs across revisions, over 4 here: every other number is equal
            theirs = dict(revs["runs"][name][metric])
            assert {k: v for k, v in entry.items() if k not in ("p_adjusted", "significant")} \
                == {k: v for k, v in theirs.items() if k not in ("p_adjusted", "significant")}


def test_missing_per_query_data_names_the_revision_file_and_command(origin, tmp_path):
    where = clone(origin, tmp_path, "low-k1", pull=False)
    url = remote_url(where)
    # the remote serves a revision's tables even before any pull
    sh(where, "skillret-eval compare --rev main --rev low-k1 --run bm25-full")
    # without the remote: one line naming the revision, the file and the command
    sh(where, f"{DVC} remote remove store")
    result = sh(where, "skillret-eval compare --rev main --rev low-k1 -o out.json", check=False)
    assert result.returncode == 2 and not (where / "out.json").exists()
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    desc, full = table_path(where, "bm25-desc"), table_path(where, "bm25-full")
    assert result.stderr.startswith(
        f"skillret-eval: error: main:{desc}: per-query table neither in "
        f"the local DVC cache nor on a reachable remote (fetch it: `dvc fetch --all-commits "
        f"{desc}`, or make it: `git checkout main && dvc repro`)")
    # the command it names fetches it; then it works with no remote at all
    sh(where, f"{DVC} remote add -d store {shlex.quote(url)}")
    hybrid = table_path(where, "hybrid")
    sh(where, f"{DVC} fetch --all-commits {desc} {full} {hybrid}")
    sh(where, f"{DVC} remote remove store")
    sh(where, "skillret-eval compare --rev main --rev low-k1")
    # the workspace's tables were never pulled
    result = sh(where, "skillret-eval compare --rev main", check=False)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"skillret-eval: error: workspace:{desc}: per-query table not in "
        f"the workspace (fetch it: `dvc pull {desc}`, or make it: `dvc repro`)")


def table_path(repo: Path, run: str) -> str:
    """Where the pipeline keeps a run's per-query table (from dvc.lock, whatever the layout)."""
    lock = yaml.safe_load((repo / "dvc.lock").read_text())["stages"]
    paths = [o["path"] for stage in lock.values() for o in stage.get("outs", [])
             if "per_query/" in o["path"] and o["path"].rsplit("/", 1)[-1].startswith(run + ".")]
    assert len(paths) == 1, paths
    return paths[0]


def remote_url(repo: Path) -> str:
    return re.search(r"url = (.+)", (repo / ".dvc" / "config").read_text()).group(1).strip()


@pytest.mark.parametrize("args,message", [
    ("--rev main --run nope", "main: no run named 'nope' in params.yaml "
                              "(registered or fused: bm25-desc, bm25-full, hybrid)"),
    ("--rev no-such-branch", "no-such-branch: not a revision of the git repository"),
    ("--rev main --metric MAP@100", "no per-query values of MAP@100"),
    ("--rev main --rev low-k1 --baseline bm25-full", "--baseline compares runs within one "
                                                     "revision: give one --rev"),
    ("--rev main --baseline nope", "main: unknown baseline 'nope' (registered or fused: "
                                   "bm25-desc, bm25-full, hybrid)"),
    ("--rev main --qrels q.txt", "--qrels does not apply"),
])
def test_bad_revision_input_stops_with_one_line(pulled, args, message):
    where = pulled
    result = sh(where, f"skillret-eval compare {args} -o out.json", check=False)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert not (where / "out.json").exists()


def test_revisions_compare_fused_runs_and_name_the_runs_of_one_side(pulled, tmp_path):
    """The runs a revision's pipeline scores, fused ones included; a run scored at only one of
    the two revisions is named in one note, not silently skipped."""
    where = sample.copy(pulled, tmp_path / "clone")   # a fresh clone of low-k1, pulled
    result = sh(where, "skillret-eval compare --rev main --rev low-k1 --run hybrid "
                       "--metric NDCG@10 -o fused.json")
    assert list(json.loads((where / "fused.json").read_text())["runs"]) == ["hybrid"]
    params = yaml.safe_load((where / "params.yaml").read_text())
    params["fuse"]["sum"] = {"method": "combsum", "runs": ["bm25-desc", "bm25-full"]}
    (where / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    sh(where, f"{DVC} repro")
    result = sh(where, "skillret-eval compare --rev main --metric NDCG@10 -o both.json")
    notes = [line for line in result.stderr.splitlines() if "one revision only" in line]
    assert notes == ["skillret-eval: note: runs at one revision only, not compared: "
                     "workspace only: sum"], result.stderr
    assert list(json.loads((where / "both.json").read_text())["runs"]) == [
        "bm25-desc", "bm25-full", "hybrid"]


def test_compare_stage(pulled, tmp_path):
    where = sample.copy(pulled, tmp_path / "clone")   # a fresh clone of low-k1, pulled
    stage = json.loads((where / "metrics" / "compare.json").read_text())
    # the stage's numbers are the command's over the run files
    sh(where, "skillret-eval compare --qrels data/sample/qrels/test.jsonl "
              "--run runs/bm25-full.json --run runs/bm25-desc.json "
              "--run hybrid=outputs/fused/hybrid.trec --output cli.json "  # the fused run too
              "--breakdown n_required --breakdown skill_category "  # eval.breakdown
              "--skills data/sample/skills/test.jsonl")
    assert (where / "cli.json").read_bytes() == (where / "metrics" / "compare.json").read_bytes()
    assert stage["baseline"] == "bm25-full" and list(stage["runs"]) == ["bm25-desc", "hybrid"]
    assert (where / "reports" / "compare.md").read_text().startswith("# Is it significant?")
    assert "Running stage" not in sh(where, f"{DVC} repro").stdout
    # the verdict in the headline (dvc metrics diff); every test statistic with --targets
    diff = json.loads(sh(where, f"{DVC} metrics diff main --json").stdout)
    assert "bm25-desc.delta" in diff["metrics/headline.json"]
    diff = json.loads(sh(where, f"{DVC} metrics diff main --json --targets "
                                f"metrics/compare.json").stdout)
    changed = diff["metrics/compare.json"]
    assert "runs.bm25-desc.NDCG@10.delta" in changed and "runs.bm25-desc.NDCG@10.p_t" in changed
    # a compare setting reruns only the compare stage
    params = yaml.safe_load((where / "params.yaml").read_text())
    params["compare"]["seed"] = 1
    (where / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    ran = set(re.findall(r"Running stage '([^']+)'", sh(where, f"{DVC} repro").stdout))
    assert ran == {"compare"}
    assert json.loads((where / "metrics" / "compare.json").read_text())["tests"]["seed"] == 1
    # a bad setting stops the stage with one line and leaves the previous outputs in place
    before = (where / "metrics" / "compare.json").read_bytes()
    params["compare"]["baseline"] = "nope"
    (where / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    result = sh(where, f"{DVC} repro", check=False)
    assert result.returncode != 0
    assert "compare: error: compare.baseline: unknown run 'nope'" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert (where / "metrics" / "compare.json").read_bytes() == before
