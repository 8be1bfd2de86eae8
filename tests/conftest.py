"""Shared fixtures: where trec_eval's conformance files are, and a git identity for real git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance" / "trec_eval"


@pytest.fixture
def conformance() -> Path:
    """trec_eval's own test files, read in place (never copied into the project)."""
    if not (CONFORMANCE / "qrels.test").is_file():
        pytest.skip(f"trec_eval conformance files not found at {CONFORMANCE} "
                    f"(expected ../shared/conformance/trec_eval beside the project)")
    return CONFORMANCE


@pytest.fixture
def git_env(tmp_path, monkeypatch):
    """Environment for tests that drive real git: their own identity, no user config."""
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "skillret tests", "GIT_AUTHOR_EMAIL": "tests@skillret.invalid",
        "GIT_COMMITTER_NAME": "skillret tests", "GIT_COMMITTER_EMAIL": "tests@skillret.invalid",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(home), "DVC_NO_ANALYTICS": "1",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return {**os.environ, **env}
