"""Shared fixtures: where trec_eval's conformance files are; how much work the tests do
(``budget.py``: the hypothesis profile, loaded here before any test module is imported)."""

from __future__ import annotations

import os
from pathlib import Path

import budget
import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance" / "trec_eval"

budget.load()


def pytest_report_header(config):
    return (f"hypothesis profile: {budget.PROFILE} (CI={os.environ.get('CI', '')!r}; "
            f"SKILLRET_HYPOTHESIS overrides)")


@pytest.fixture
def conformance() -> Path:
    """trec_eval's own test files, read in place (never copied into the project)."""
    if not (CONFORMANCE / "qrels.test").is_file():
        pytest.skip(f"trec_eval conformance files not found at {CONFORMANCE} "
                    f"(expected ../shared/conformance/trec_eval beside the project)")
    return CONFORMANCE
