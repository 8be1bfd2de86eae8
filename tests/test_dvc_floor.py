"""benchmarks/dvc_floor.py's stand-in pipeline: the same stages as dvc.yaml but for their
commands, and a stub that writes every output, changed when (and only when) a source is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import dvc_floor  # noqa: E402


def test_the_stub_pipeline_is_dvc_yaml_but_for_its_commands():
    pipeline = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    stub = dvc_floor.stub_pipeline(pipeline, dvc_floor.DIRECTORY_OUTS)
    assert stub.keys() == pipeline.keys() and stub["stages"].keys() == pipeline["stages"].keys()
    for name, stage in pipeline["stages"].items():
        body, stub_body = stage.get("do", stage), stub["stages"][name].get("do", stub[
            "stages"][name])
        assert {k: v for k, v in stub_body.items() if k != "cmd"} == {
            k: v for k, v in body.items() if k != "cmd"}, name
        assert stage.keys() == stub["stages"][name].keys()
        cmd = stub_body["cmd"]
        assert cmd.startswith("python floor_stub.py "), name
        outs = [p for key in ("outs", "metrics", "plots") for p in dvc_floor._paths(body.get(key))]
        assert outs and cmd.endswith(" ".join(
            f"'{p}/'" if p in dvc_floor.DIRECTORY_OUTS else f"'{p}'" for p in outs)), name
        sources = cmd.split(" --outs ")[0].split()[2:]
        if name == "fuse_inputs":
            assert sources == ["'--fuse'", "'${key}'"]
        else:
            assert sources == [f"'{p}'" for p in dvc_floor._paths(body.get("deps"))], name


def stub(folder: Path, *args: str) -> None:
    (folder / "floor_stub.py").write_text(dvc_floor.STUB)
    subprocess.run([sys.executable, "floor_stub.py", *args], cwd=folder, check=True)


def test_the_stub_writes_each_output_from_its_sources(tmp_path):
    (tmp_path / "runs").mkdir()
    for name in ("a", "b"):
        (tmp_path / "runs" / f"{name}.trec").write_text(name)
    (tmp_path / "settings.json").write_text("{}")
    (tmp_path / "floor_files.json").write_text(json.dumps({"folder": ["a.json", "b.json"]}))
    args = ("runs/a.trec", "runs", "settings.json", "--outs", "out/one.json", "folder/")
    stub(tmp_path, *args)
    written = ["out/one.json", "folder/stub.txt", "folder/a.json", "folder/b.json"]
    first = {path: (tmp_path / path).read_text() for path in written}
    assert {path: text.split() for path, text in first.items()} == {
        path: [path, first["out/one.json"].split()[1]] for path in written}
    assert sorted(p.name for p in tmp_path.rglob("*.tmp")) == []

    stub(tmp_path, *args)  # nothing changed: the same bytes
    assert {path: (tmp_path / path).read_text() for path in written} == first
    os.utime(tmp_path / "runs" / "b.trec", ns=(1, 1))  # a file of a folder source changed
    stub(tmp_path, *args)
    assert all((tmp_path / path).read_text() != first[path] for path in written)


def test_fuse_inputs_stub_reads_only_its_own_runs(tmp_path):
    (tmp_path / "outputs" / "runs").mkdir(parents=True)
    for name in ("r00", "r01", "r02"):
        (tmp_path / "outputs" / "runs" / f"{name}.parquet").write_text(name)
    (tmp_path / "floor_fuse.json").write_text(json.dumps({"hybrid": ["r00", "r01"]}))
    args = ("--fuse", "hybrid", "--outs", "reports/fusion/hybrid.json")
    stub(tmp_path, *args)
    out = tmp_path / "reports" / "fusion" / "hybrid.json"
    first = out.read_text()
    os.utime(tmp_path / "outputs" / "runs" / "r02.parquet", ns=(1, 1))  # not one of its runs
    stub(tmp_path, *args)
    assert out.read_text() == first
    os.utime(tmp_path / "outputs" / "runs" / "r01.parquet", ns=(1, 1))
    stub(tmp_path, *args)
    assert out.read_text() != first
