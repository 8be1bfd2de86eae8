"""The settings stage's per-run files (``reports/run_settings/<run>.json``), what each
``score@<run>`` depends on instead of ``run_options.<run>`` and ``reports/settings.json``: a
file changes when, and only when, the shared settings or that run's own options do. No git or
DVC: the stage's function in a folder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from skillret.errors import ConfigError
from skillret.pipeline import layout
from skillret.pipeline.project_stages import settings

PARAMS = {
    "data": {"skills": None, "queries": None},
    "runs": {"one": "runs/one.trec", "two": "runs/two.trec"},
    "run_options": {"one": {}, "two": {"format": "trec"}},
    "eval": {"profiles": ["official"], "breakdown": []},
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path(layout.QRELS).parent.mkdir(parents=True)
    Path(layout.QRELS).write_text("query_id\tskill_id\trelevance\nq1\ts1\t2\n")
    write_params(PARAMS)
    return tmp_path


def write_params(params: dict) -> None:
    Path("params.yaml").write_text(yaml.safe_dump(params))


def files() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(Path(layout.RUN_SETTINGS_DIR).iterdir())}


def test_each_run_has_its_options_and_the_settings_sha256(project):
    settings()
    shared = hashlib.sha256(Path(layout.SETTINGS).read_bytes()).hexdigest()
    assert {name: json.loads(data) for name, data in files().items()} == {
        "one.json": {"run": "one", "path": "runs/one.trec", "options": {},
                     "settings_sha256": shared},
        "two.json": {"run": "two", "path": "runs/two.trec", "options": {"format": "trec"},
                     "settings_sha256": shared}}


def test_a_file_changes_only_with_its_run_or_the_shared_settings(project):
    settings()
    before = files()
    settings()
    assert files() == before                       # the same params: the same bytes
    write_params({**PARAMS, "run_options": {"one": {}, "two": {"format": "tsv"}}})
    settings()
    after = files()
    assert after["one.json"] == before["one.json"] and after["two.json"] != before["two.json"]
    write_params({**PARAMS, "eval": {"profiles": ["recommended"], "breakdown": []}})
    settings()
    assert all(files()[name] != after[name] for name in after)   # every run's settings


def test_a_run_no_longer_registered_loses_its_file(project):
    settings()
    write_params({**PARAMS, "runs": {"one": "runs/one.trec"}, "run_options": {"one": {}}})
    settings()
    assert list(files()) == ["one.json"]


def test_a_run_without_its_options_entry_stops_the_stage_and_writes_nothing(project):
    settings()
    before = {p: p.read_bytes() for p in Path("reports").rglob("*.json")}
    write_params({**PARAMS, "runs": {**PARAMS["runs"], "mine": "runs/mine.trec"}})
    with pytest.raises(ConfigError, match=r"run 'mine' has no run_options\.mine entry"):
        settings()
    assert {p: p.read_bytes() for p in Path("reports").rglob("*.json")} == before
