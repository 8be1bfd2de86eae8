"""Stage inputs: a file params.yaml names that is missing (and that no stage makes) is one line
naming its key, before DVC would stop on it with its own ``[Errno 2]``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import dvc_server
import sample_pipeline as sample
import yaml

from skillret.errors import ConfigError
from skillret.pipeline.project_stages import check_inputs, named_files, stage_outputs, suggestion

PARAMS = {
    "data": {"skills": "data/skills.jsonl", "queries": "data/queries.jsonl", "split": "test"},
    "qrels": {"path": "data/qrels/test.jsonl", "format": None},
    "runs": {"bm25": "runs/bm25.json", "mine": "results/mine.trec"},
}


@pytest.fixture
def project(tmp_path) -> Path:
    for path in ("data/skills.jsonl", "data/queries.jsonl", "data/qrels/test.jsonl",
                 "results/mine.trec"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    return tmp_path


def made(*paths):
    """A stand-in for DVC: the outputs ``paths`` (relative to the project) and nothing else."""
    return lambda root: {os.path.normpath(os.path.join(root, p)) for p in paths}


def with_value(section: str, key: str, value: str) -> dict:
    return {**PARAMS, section: {**PARAMS[section], key: value}}


def test_named_files_are_the_qrels_the_data_and_every_run():
    assert named_files(PARAMS) == [
        ("qrels.path", "data/qrels/test.jsonl"), ("data.skills", "data/skills.jsonl"),
        ("data.queries", "data/queries.jsonl"), ("runs.bm25", "runs/bm25.json"),
        ("runs.mine", "results/mine.trec")]
    # what is not a path is left to the stage that reads it
    assert named_files({"qrels": {"path": 3}, "runs": {"a": {"format": "trec"}}}) == []


def test_every_file_present_asks_nothing_of_dvc(project):
    (project / "runs").mkdir()
    (project / "runs/bm25.json").write_text("")

    def no_dvc(root):
        raise AssertionError("DVC was asked")

    checked = check_inputs(PARAMS, project, outputs=no_dvc)
    assert all(present for _, _, present in checked) and len(checked) == 5


def test_a_missing_file_a_stage_makes_is_fine(project):
    checked = check_inputs(PARAMS, project, outputs=made("runs/bm25.json"))
    assert ("runs.bm25", "runs/bm25.json", False) in checked
    # inside a folder a stage makes
    assert check_inputs(PARAMS, project, outputs=made("runs"))


def test_missing_qrels_names_the_key_and_the_closest_file(project):
    params = with_value("qrels", "path", "data/qrels/tset.jsonl")
    with pytest.raises(ConfigError) as caught:
        check_inputs(params, project, outputs=made("runs/bm25.json"))
    assert str(caught.value) == ("params.yaml: qrels.path: data/qrels/tset.jsonl does not exist "
                                 "(did you mean data/qrels/test.jsonl?)")


def test_missing_run_names_its_key(project):
    params = {**PARAMS, "runs": {**PARAMS["runs"], "dense": "results/dense.trec"}}
    with pytest.raises(ConfigError) as caught:
        check_inputs(params, project, "params.yaml", outputs=made("runs/bm25.json"))
    assert str(caught.value) == "params.yaml: runs.dense: results/dense.trec does not exist"


def test_the_hint_follows_a_typo_in_a_folder_and_knows_what_stages_make(project):
    outputs = frozenset(made("runs/bm25.json")(project))
    assert suggestion(project, "dat/qrel/test.jsonl") == "data/qrels/test.jsonl"
    assert suggestion(project, "runs/bm52.json", outputs) == "runs/bm25.json"
    assert suggestion(project, "elsewhere/x.trec") is None
    params = {**PARAMS, "runs": {"bm25": "runs/bm52.json", "mine": "results/mien.trec"}}
    with pytest.raises(ConfigError) as caught:
        check_inputs(params, project, outputs=made("runs/bm25.json"))
    assert str(caught.value) == (
        "params.yaml: runs.bm25: runs/bm52.json does not exist (did you mean runs/bm25.json?); "
        "runs.mine: results/mien.trec does not exist (did you mean results/mine.trec?)")


def test_many_missing_files_stay_one_line(project):
    params = {**PARAMS, "runs": {f"r{i}": f"results/r{i}.trec" for i in range(6)}}
    with pytest.raises(ConfigError) as caught:
        check_inputs(params, project, outputs=made())
    message = str(caught.value)
    assert "\n" not in message and message.endswith("; and 3 more missing files")
    assert message.count("does not exist") == 3


def test_stage_outputs_are_read_from_dvc_with_foreach_resolved(tmp_path):
    pytest.importorskip("dvc")
    from dvc.repo import Repo

    (tmp_path / "elsewhere").mkdir()
    assert stage_outputs(tmp_path / "elsewhere") == frozenset()   # no DVC project
    Repo.init(os.fspath(tmp_path), no_scm=True).close()
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"configs": {"a": {}, "b": {}}}))
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"retrieve": {
        "foreach": "${configs}", "do": {"cmd": "touch runs/${key}.json",
                                        "outs": ["runs/${key}.json"]}}}}))
    assert stage_outputs(tmp_path) == {os.fspath(tmp_path / "runs/a.json"),
                                       os.fspath(tmp_path / "runs/b.json")}


# --- through dvc repro -------------------------------------------------------------------------

@pytest.fixture
def repo(sample_pipeline, tmp_path) -> tuple[Path, dict]:
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, **sample.GIT_ENV, "HOME": str(home),
           "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")}
    return sample.copy(sample_pipeline.path, tmp_path / "project"), env


def repro_with(repo: tuple[Path, dict], update) -> tuple[int, list[str]]:
    """``dvc repro`` after ``update(params)``: its exit status, and what it printed (stdout and
    stderr in the order they came)."""
    path, env = repo
    params = yaml.safe_load((path / "params.yaml").read_text())
    update(params)
    (path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    result = subprocess.run([*dvc_server.command(), "repro"], cwd=path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return result.returncode, result.stdout.splitlines()


def ours_before_dvcs(lines: list[str], message: str) -> None:
    ours = [n for n, line in enumerate(lines) if line.startswith("inputs: error:")]
    assert ours and lines[ours[0]] == message, lines
    dvcs = [n for n, line in enumerate(lines) if line.startswith("ERROR:")]
    assert dvcs and ours[0] < dvcs[0], lines
    text = "\n".join(lines)
    assert "Errno 2" not in text and "Traceback" not in text, text
    assert "Running stage 'normalize_qrels'" not in text and "Running stage 'score@" not in text


@pytest.mark.pipeline
def test_a_typo_in_qrels_path_is_our_one_line_before_dvcs(repo):
    before = (repo[0] / "reports/inputs.json").read_bytes()
    status, lines = repro_with(repo, lambda p: p["qrels"].update(
        path="data/sample/qrels/tset.jsonl"))
    assert status != 0
    ours_before_dvcs(lines, "inputs: error: params.yaml: qrels.path: data/sample/qrels/tset.jsonl "
                            "does not exist (did you mean data/sample/qrels/test.jsonl?)")
    assert (repo[0] / "reports/inputs.json").read_bytes() == before   # nothing written


@pytest.mark.pipeline
def test_a_typo_in_a_run_path_is_our_one_line_before_dvcs(repo):
    status, lines = repro_with(repo, lambda p: (
        p["runs"].update(mine="runs/bm25-ful.json"), p["run_options"].update(mine={})))
    assert status != 0
    ours_before_dvcs(lines, "inputs: error: params.yaml: runs.mine: runs/bm25-ful.json does not "
                            "exist (did you mean runs/bm25-full.json?)")
