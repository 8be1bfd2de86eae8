"""The compare stage's query reports kept in its memo (``reports/queries/<run>.md``): a report is
read back only under the key of everything it is made from (``report_keys``), and a report read
back is the report computed again. No git or DVC: runs scored by the stage's own step."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml

from skillret.analysis.memo import PairedTestMemo
from skillret.io.per_query import read_table_file
from skillret.pipeline import query_reports as qr
from skillret.pipeline import layout
from skillret.pipeline.project_stages import normalize_qrels
from skillret.pipeline.run_stages import score

METRIC = "NDCG@10"
QUERIES = [f"q{i}" for i in range(12)]
SKILLS = [f"s{i:02d}" for i in range(30)]


def write_run(folder: Path, name: str, shift: int) -> None:
    """A run whose rankings rotate the skills by ``shift`` (each run ranks its own way)."""
    lines = [f"{q} Q0 {SKILLS[(i * 3 + r + shift) % len(SKILLS)]} {r + 1} {20 - r} {name}\n"
             for i, q in enumerate(QUERIES) for r in range(15)]
    (folder / "runs" / f"{name}.trec").write_text("".join(lines))
    with contextlib.chdir(folder):
        score(name)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "runs").mkdir()
    names = ("base", "one", "two")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({
        "runs": {name: f"runs/{name}.trec" for name in names},
        "run_options": {name: {} for name in names},
        "eval": {"profiles": ["recommended"], "plot_profile": "recommended"}}))
    (tmp_path / "qrels.txt").write_text("".join(
        f"{q} 0 {SKILLS[(i * 3 + k) % len(SKILLS)]} {2 if k == 0 else 1}\n"
        for i, q in enumerate(QUERIES) for k in (0, 4, 9)))
    (tmp_path / "queries.jsonl").write_text("".join(
        json.dumps({"id": q, "query": f"request {q}"}) + "\n" for q in QUERIES))
    normalize_qrels(tmp_path / "qrels.txt", tmp_path / layout.QRELS)
    for name, shift in (("base", 0), ("one", 2), ("two", 5)):
        write_run(tmp_path, name, shift)
    return tmp_path


def reports(folder: Path, memo=None, **changed):
    runs = ["base", "one", "two"]
    tables = {run: folder / layout.PER_QUERY_DIR / f"{run}.tsv" for run in runs}
    loaded = {run: read_table_file(tables[run], [METRIC]) for run in runs}
    patterns = [str(folder / layout.CANONICAL_RUN)]
    options = {"queries_file": folder / "queries.jsonl", "shown": 3, **changed}
    keys = qr.report_keys(runs, "base", tables, patterns, folder / "qrels.txt", METRIC,
                          **options)
    texts = qr.query_reports(runs, "base", loaded, patterns, folder / "qrels.txt", METRIC,
                             keys=keys, memo=memo, **options)
    return texts, keys


def test_a_kept_report_is_the_report_computed_again(project, monkeypatch, tmp_path):
    plain, keys = reports(project)
    assert set(plain) == {"one", "two"} and all("request q" in t for t in plain.values())
    memo = PairedTestMemo()
    assert reports(project, memo)[0] == plain
    memo.save(tmp_path / "memo.json")
    saved = json.loads((tmp_path / "memo.json").read_text())["texts"]
    assert saved == {keys["one"]: plain["one"], keys["two"]: plain["two"]}
    # nothing changed: no canonical run is read
    read = []
    columns = qr._columns
    monkeypatch.setattr(qr, "_columns", lambda path: read.append(Path(path).stem) or
                        columns(path))
    assert reports(project, PairedTestMemo.load(tmp_path / "memo.json"))[0] == plain
    assert read == []
    # one run changed: only its report is computed (with the baseline's rankings)
    write_run(project, "two", 7)
    fresh, new_keys = reports(project)
    read.clear()
    memo = PairedTestMemo.load(tmp_path / "memo.json")
    assert reports(project, memo)[0] == fresh
    assert sorted(read) == ["base", "two"]
    assert new_keys["one"] == keys["one"] and new_keys["two"] != keys["two"]
    assert fresh["one"] == plain["one"] and fresh["two"] != plain["two"]


def test_every_input_of_a_report_is_part_of_its_key(project, monkeypatch):
    _, keys = reports(project)
    assert reports(project)[1] == keys                                   # a function of them
    assert reports(project, shown=4)[1]["one"] != keys["one"]
    queries = project / "queries.jsonl"
    queries.write_text(queries.read_text().replace("request q1", "another q1"))
    assert reports(project)[1]["one"] != keys["one"]
    qrels = project / "qrels.txt"
    qrels.write_text(qrels.read_text() + f"q0 0 {SKILLS[29]} 1\n")
    changed = reports(project)[1]
    assert changed["one"] != keys["one"] and changed["two"] != keys["two"]
    monkeypatch.setattr("skillret.io.hashing.tree_sha256", lambda folder: "other code")
    assert reports(project)[1]["one"] != changed["one"]
    monkeypatch.undo()
    # the per-query table counts on its own (the canonical file left as it was)
    runs = ["base", "one", "two"]
    tables = {run: project / layout.PER_QUERY_DIR / f"{run}.tsv" for run in runs}
    patterns = [str(project / layout.CANONICAL_RUN)]

    def keys_now():
        return qr.report_keys(runs, "base", tables, patterns, qrels, METRIC,
                              queries_file=queries, shown=3)
    assert keys_now() == changed
    tables["one"].write_text(tables["one"].read_text() + "\n")
    assert keys_now()["one"] != changed["one"] and keys_now()["two"] == changed["two"]
