"""The README is executable: every command it shows runs as written, in order, in a fresh
project, and the output it quotes is what the command prints (tests/readme_harness.py)."""

from __future__ import annotations

import pytest

from readme_harness import (FENCE, RUN_ELSEWHERE, ROOT, environment, make_project, make_venv,
                            output_matches, parse, run_command)

README = ROOT / "README.md"
pytestmark = pytest.mark.pipeline


def test_harness_matches_lines_gaps_and_wildcards():
    assert output_matches(["a  b", "...", "z"], "a b\nx\ny\nz\n")
    assert output_matches(["...", "NDCG ... 0.5"], "head\nNDCG  0.1 0.5\n")
    assert not output_matches(["a", "z"], "a\nx\nz\n")
    assert not output_matches(["NDCG 0.5"], "NDCG 0.6\n")
    assert output_matches([], "")


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
    for command in RUN_ELSEWHERE:
        assert command in shown and command in ci.splitlines()


def test_readme_runs_as_written(tmp_path):
    blocks = parse(README.read_text())
    assert sum(len(b.commands) for b in blocks) >= 10
    project = make_project(tmp_path / "project")
    env = environment(make_venv(tmp_path / "venv"), tmp_path)
    failures = []
    for block in blocks:
        if block.skipped:
            continue
        for command in block.commands:
            if command.text in RUN_ELSEWHERE:
                continue
            result = run_command(command, project, env)
            if result.returncode != 0:
                failures.append(f"README line {command.line} ({command.section}): "
                                f"`{command.text}` exited {result.returncode}:\n"
                                f"{result.stdout[-3000:]}")
                break
            if command.expected is not None and not output_matches(command.expected,
                                                                   result.stdout):
                failures.append(f"README line {command.line} ({command.section}): "
                                f"`{command.text}` printed:\n{result.stdout}")
        if failures:
            break
    assert not failures, "\n\n".join(failures)
