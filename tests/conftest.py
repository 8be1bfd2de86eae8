"""Shared fixtures: where trec_eval's conformance files are."""

from __future__ import annotations

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
