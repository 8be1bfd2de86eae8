"""The README and the documentation pages are executable: every command they show runs as
written, in order, in a fresh project, and the output they quote is what the command prints
(tests/readme_harness.py says how each kind of block runs)."""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

import pytest

from readme_harness import (FENCE, QUICKSTART, ROOT, RUN_ELSEWHERE, Command, copy_project,
                            output_matches, parse, quickstart, run_command, run_documents,
                            sequences)

README = ROOT / "README.md"
SEQUENCES = sequences()
PAGES = [name for name in SEQUENCES if name not in ("README", "tutorial")]


def test_harness_matches_lines_gaps_and_wildcards():
    assert output_matches(["a  b", "...", "z"], "a b\nx\ny\nz\n")
    assert output_matches(["...", "NDCG ... 0.5"], "head\nNDCG  0.1 0.5\n")
    assert not output_matches(["a", "z"], "a\nx\nz\n")
    assert not output_matches(["NDCG 0.5"], "NDCG 0.6\n")
    assert output_matches([], "")


def test_harness_reads_each_kind_of_block():
    page = ("# A\n\n```console\n$ echo hi\nhi\n```\n\n```bash\nls \\\n  -l  # long\n```\n\n"
            "```pycon\n>>> 1 + 1\n2\n```\n\n```python\nprint(1)\n```\n\n```yaml\na: 1\n```\n\n"
            "<!-- not run (needs a GPU) -->\n```bash\ntrain\n```\n\n```text\nshown\n```\n")
    blocks = parse(page)
    assert [b.lang for b in blocks] == ["console", "bash", "pycon", "python", "yaml", "bash"]
    assert blocks[0].commands[0].expected == ["hi"]
    assert blocks[1].commands[0].text == "ls -l"
    assert blocks[2].commands[0].text == ">>> 1 + 1\n2\n"
    assert blocks[-1].skipped == "needs a GPU"


def test_python_blocks_run_and_sessions_are_compared(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran = {text: run_command(Command(text, 1, None, "", lang), tmp_path, env).returncode
           for lang, text in (("pycon", ">>> 1 + 1\n2\n"), ("pycon", ">>> 1 + 1\n3\n"),
                              ("python", "print(1)\n"), ("python", "raise SystemExit(4)\n"),
                              ("yaml", "a: [1, 2]\n"), ("yaml", "a: [1, 2\n"))}
    assert [code == 0 for code in ran.values()] == [True, False, True, False, True, False]


def test_the_readme_is_short_and_scores_a_file_early():
    lines = README.read_text().splitlines()
    assert len(lines) <= 250
    assert any(line.startswith("$ skillret-eval score ") for line in lines[:60])


def test_every_readme_link_resolves():
    """Links into the site are to its Markdown files (readable on a forge as they are), and
    anchors to the README's own headings."""
    import re

    text = README.read_text()
    heads = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
             for h in re.findall(r"^#+ (.*)$", text, re.M)}
    for target in re.findall(r"\]\(([^)]+)\)", text):
        if target.startswith("#"):
            assert target[1:] in heads, target
        elif "://" not in target:
            assert (ROOT / target.split("#")[0]).is_file(), target


def test_every_readme_command_and_output_line_fits_120_columns():
    text = README.read_text()
    for match in FENCE.finditer(text):
        if match.group(1) in ("console", "bash"):
            first = text.count("\n", 0, match.start()) + 2
            for n, line in enumerate(match.group(2).splitlines()):
                assert len(line) <= 120, (first + n, line)


def test_commands_run_elsewhere_do_run_there():
    ci = (ROOT / ".ci" / "run").read_text()
    shown = {c.text for b in parse(README.read_text()) for c in b.commands}
    assert set(RUN_ELSEWHERE) <= shown
    assert 'pip install -e ".[test]" && pytest' in ci.splitlines()
    site_test = (ROOT / "tests" / "docs" / "test_site.py").read_text()
    assert '"mkdocs", "build", "--strict"' in site_test


def test_every_page_is_run():
    """The tutorial's pages run in order; every other page with a command, alone."""
    assert len(SEQUENCES["tutorial"]) >= 8
    assert {"index.md", "reference/formats.md", "reference/validation.md"} <= set(PAGES)


@pytest.fixture(scope="session")
def started(tmp_path_factory):
    """The project after the Quickstart: built once for the session, by whichever pytest-xdist
    worker gets there first; every document runs in a copy of it."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    base = base / "docs-quickstart"
    base.mkdir(exist_ok=True)
    with open(base.parent / "docs-quickstart.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return quickstart(base)


def run_sequence(name: str, started, tmp_path) -> None:
    project, env = started
    failures = run_documents(SEQUENCES[name], copy_project(project, tmp_path / "project"), env)
    assert not failures, "\n\n".join(failures)


@pytest.mark.pipeline
def test_tutorial_runs_as_written(started, tmp_path):
    run_sequence("tutorial", started, tmp_path)


@pytest.mark.pipeline
def test_readme_runs_as_written(started, tmp_path):
    run_sequence("README", started, tmp_path)


@pytest.mark.pipeline
@pytest.mark.parametrize("page", PAGES)
def test_page_runs_as_written(page, started, tmp_path):
    run_sequence(page, started, tmp_path)
