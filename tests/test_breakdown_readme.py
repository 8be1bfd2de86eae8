"""The README's "Where did it change?" section: its command runs as written and prints what the
README quotes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The sample data and the example retriever's bm25-full run, as `dvc repro` leaves them."""
    pytest.importorskip("bm25s")
    work = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "data", work / "data")
    shutil.copy(ROOT / "params.yaml", work / "params.yaml")
    result = subprocess.run([sys.executable, str(ROOT / "stages" / "retrieve_bm25.py"),
                             "--config", "bm25-full", "--output", "runs/bm25-full.json"],
                            cwd=work, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return work


def test_breakdown_command_prints_what_the_readme_shows(project):
    text = section("Where did it change?")
    (lang, command), (_, quoted) = blocks(text)[:2]
    assert lang == "bash" and command.startswith("skillret-eval score")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    result = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True,
                            env={**os.environ, "PATH": path})
    assert result.returncode == 0, result.stderr
    printed = [line.rstrip() for line in result.stdout.strip("\n").splitlines()]
    assert printed == [line.rstrip() for line in quoted.strip("\n").splitlines()]
    metrics = json.loads((project / "metrics.json").read_text())
    three = metrics["breakdown"]["n_required"]["3"]
    assert f'"3": {{"queries": {three["queries"]},\n"Recall@5": {three["Recall@5"]}' in text
    assert list(metrics["breakdown"]) == ["n_required", "skill_category"]
