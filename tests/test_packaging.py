"""What `pip install skillret-eval` (no extras) brings, and what the library needs of DVC."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QRELS = "q1 0 s1 2\nq1 0 s2 1\nq2 0 s3 1\n"
RUN = "q1 Q0 s1 1 3.0 r\nq1 Q0 s9 2 2.0 r\nq2 Q0 s3 1 1.0 r\n"


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _names(requirements) -> set[str]:
    return {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in requirements}


def test_dvc_is_an_extra_not_a_dependency():
    project = _project()
    assert "dvc" not in _names(project["dependencies"])
    extras = project["optional-dependencies"]
    assert "dvc" in _names(extras["pipeline"])
    assert "dvc" in _names(extras["example"])  # the Quickstart's `dvc repro`
    assert "dvc" in _names(extras["test"])


def _without_dvc(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``code`` where ``import dvc`` fails, as after `pip install skillret-eval`."""
    prelude = "import sys; sys.modules['dvc'] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code], cwd=cwd, capture_output=True,
                          text=True)


def test_library_and_cli_score_without_dvc(tmp_path):
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.trec").write_text(RUN)
    result = _without_dvc(
        "import skillret\n"
        "print(round(skillret.evaluate('q.txt', 'r.trec')['NDCG@5'], 5))\n"
        "from skillret import cli\n"
        "status = cli.main(['score', '--qrels', 'q.txt', '--run', 'r.trec', '-q', '-o', 'm.json'])\n"
        "assert status == 0, status\n"
        "assert not any(m == 'dvc' or m.startswith('dvc.') for m in sys.modules if sys.modules[m])\n",
        tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "m.json").is_file()


def test_compare_rev_without_dvc_names_the_extra(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    result = _without_dvc("from skillret import cli\n"
                          "sys.exit(cli.main(['compare', '--rev', 'HEAD']))\n", tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "pip install 'skillret-eval[pipeline]'" in result.stderr


def test_bench_without_its_extra_names_it(monkeypatch, capsys):
    """`python benchmarks/bench.py` as the README shows it, where the bench extra is missing."""
    import importlib.util

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import bench

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ranx" else real(name, *a))
    assert bench.main([]) == 2
    assert capsys.readouterr().err == ('bench.py: error: the contenders need ranx: '
                                       'pip install -e ".[bench]"\n')
