"""A comparison between two revisions says whether they are comparable, and gates a pull
request: real git and dvc, two branches of the sample project."""

from __future__ import annotations

import json

import pytest
import sample_pipeline as sample
from test_promises import dvc, git, skillret_eval

pytestmark = pytest.mark.pipeline


def branch(project, name: str, change) -> None:
    """`name` off main, with `change(project)` made, reproduced and committed."""
    git(project, "checkout", "-q", "-b", name, "main")
    change(project)
    dvc(project, "repro")
    git(project, "add", "-A")
    git(project, "commit", "-qm", name)


def drop_a_third_of_the_judgments(project) -> None:
    path = project / "data/sample/qrels/test.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("".join(f"{line}\n" for i, line in enumerate(lines) if i % 3))


def upgrade(project) -> None:
    path = project / "skillret/__init__.py"
    path.write_text(path.read_text().replace('__version__ = "0.1.0"', '__version__ = "9.0.0"'))


def set_param(old: str, new: str):
    def change(project):
        text = (project / "params.yaml").read_text()
        assert old in text
        (project / "params.yaml").write_text(text.replace(old, new, 1))
    return change


@pytest.fixture(scope="module")
def branches(sample_revisions, shared_dir, tmp_path_factory):
    """The session's revisions (tests/sample_pipeline.py) with main as reproduced and these
    branches: `fewer-qrels` (a third of the judgments gone, the runs as they were); `upgraded`
    (another version of the package); `worse` (bm25-full on the skill names alone: the
    revisions' `names-only`); `same` (a comment in params.yaml): made once for the session,
    copied for each process."""
    def build(base):
        project = sample.copy(sample_revisions, base / "project")
        git(project, "branch", "worse", "names-only")
        branch(project, "fewer-qrels", drop_a_third_of_the_judgments)
        branch(project, "upgraded", upgrade)
        branch(project, "same", set_param("# The sample benchmark", "# The sample benchmark (a)"))
        return project

    built = sample.once(shared_dir / "trust", build)
    return sample.copy(built, tmp_path_factory.mktemp("trust") / "project")


@pytest.mark.parametrize("command", [
    ["report", "--rev", "main", "--rev", "fewer-qrels", "--format", "markdown"],
    ["compare", "--rev", "main", "--rev", "fewer-qrels"],
    ["queries", "--rev", "main", "--rev", "fewer-qrels", "--run", "bm25-full"]])
def test_revisions_scored_against_different_judgments_are_refused(branches, command):
    failed = skillret_eval(branches, *command, check=False)
    assert failed.returncode == 2 and failed.stdout == ""
    (line,) = failed.stderr.splitlines()
    assert line.startswith("skillret-eval: error: main and fewer-qrels were not scored alike: "
                           "14 queries removed (q-00003, q-00008, q-00011, ...); ")
    assert "judgments changed in " in line and "--allow-different-judgments compares " in line


def test_allowed_the_comparison_says_so_first_and_keeps_the_queries_judged_alike(branches):
    out = skillret_eval(branches, "report", "--rev", "main", "--rev", "fewer-qrels",
                        "--format", "markdown", "--allow-different-judgments").stdout
    lines = out.splitlines()
    assert lines[0] == "<!-- skillret-eval report -->"
    assert lines[3].startswith("> **Not comparable as is: main and fewer-qrels were not scored "
                               "alike (14 queries removed")
    kept = int(lines[3].split("compared on the ")[1].split()[0])
    assert f"3 runs at both, {kept} queries" in out
    first = skillret_eval(branches, "compare", "--rev", "main", "--rev", "fewer-qrels",
                          "--allow-different-judgments").stdout.splitlines()[0]
    assert first.startswith("Not comparable as is: main and fewer-qrels")
    # the runs did not change: on the queries judged alike, nothing is different
    assert "**worse**" not in out and "**better**" not in out


def test_the_headline_shows_changed_judgments_as_changed_rows(branches):
    diff = json.loads(dvc(branches, "metrics", "diff", "main", "fewer-qrels", "--json").stdout)
    changed = diff["metrics/headline.json"]
    assert changed["qrels.queries"] == {"old": 98, "new": 84, "diff": -14}
    assert changed["qrels.relevant"]["new"] < changed["qrels.relevant"]["old"]
    scores = json.loads((branches / "metrics/runs/bm25-full.json").read_text())
    assert scores["judgments"]["queries"] == 98 and len(scores["judgments"]["sha256"]) == 64
    assert scores["contract"]["profiles"]["official"] == {
        "query_set": "run-judged", "relevance_level": 1, "cutoffs": [5, 10, 15]}


def test_a_changed_contract_is_refused_with_what_changed(branches):
    failed = skillret_eval(branches, "report", "--rev", "main", "--rev", "upgraded",
                           check=False)
    assert failed.returncode == 2
    assert "were not scored alike: bm25-desc: skillret-eval 0.1.0 -> 9.0.0;" in failed.stderr


@pytest.mark.parametrize("gate, status", [
    (["--fail-if-worse"], 1), (["--tolerance", "NDCG@10=0.6"], 0),
    (["--tolerance", "NDCG@10=0.001"], 1), (["--tolerance", "NDCG@10=90%"], 0),
    (["--fail-if-worse", "--tolerance", "NDCG@10=1"], 1)])
def test_the_gate_fails_a_worse_run_after_printing_the_report(branches, gate, status):
    result = skillret_eval(branches, "report", "--rev", "main", "--rev", "worse",
                           "--format", "markdown", *gate, check=False)
    assert result.returncode == status, result.stderr
    assert result.stdout.startswith("<!-- skillret-eval report -->")
    failed = [line for line in result.stderr.splitlines() if "gate failed" in line]
    if status:
        # bm25-full on the skill names alone, and hybrid, which fuses it
        assert failed and {line.split()[3] for line in failed} == {"bm25-full", "hybrid"}
        assert all("NDCG@10: " in line for line in failed)
    else:
        assert not failed and "skillret-eval: gate passed" in result.stderr


def test_the_gate_passes_an_unchanged_pull_request(branches):
    result = skillret_eval(branches, "report", "--rev", "main", "--rev", "same",
                           "--fail-if-worse", "--tolerance", "NDCG@10=0")
    assert "skillret-eval: gate passed" in result.stderr


@pytest.mark.parametrize("gate, message", [
    (["--tolerance", "NDCG@10"], "expected METRIC=DROP"),
    (["--tolerance", "P@5=0.1"], "Precision@5 is not in the report"),
])
def test_a_bad_gate_is_one_line_before_any_work(branches, gate, message):
    failed = skillret_eval(branches, "report", "--rev", "main", "--rev", "same", *gate,
                           check=False)
    assert failed.returncode == 2 and failed.stdout == "" and message in failed.stderr
