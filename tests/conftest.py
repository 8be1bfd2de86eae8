"""Shared fixtures: where trec_eval's conformance files are; the sample pipeline reproduced
once per session and the states built from it (``sample_pipeline.py``); how much work the tests do (``budget.py``: the
hypothesis profile, loaded here before any test module is imported)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import budget
import pytest
import sample_pipeline as sample

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance" / "trec_eval"

budget.load()

# the commands the tests start get SIGINT's default disposition, as in a terminal, also when the
# tests run as a shell's background job, which ignores SIGINT (and so would every child)
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# every process the tests start writes the bytecode of what it imports, as Python does by default
# (PYTHONDONTWRITEBYTECODE=1 here would make each DVC stage of a fresh clone, an experiment's copy
# or the docs' project compile the package again; git and DVC ignore __pycache__)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# ranx (tests/analysis/test_fusion_ranx.py, the fusion reference) runs its numba kernels as
# plain Python: the same code on inputs of a few hundred rows, without a minute of compiling
# them in every process that imports it
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")


def pytest_configure(config):
    """Compile the package once, before any worker starts: every process the tests start (the
    CLI server, each DVC stage of a copied project) then reads the bytecode instead of compiling
    ~100 modules, as on a machine that writes bytecode (PYTHONDONTWRITEBYTECODE=1 stops Python
    from writing it; compileall writes it anyway; git and DVC ignore __pycache__)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        import compileall

        for folder in ("skillret", "stages", "retrievers"):
            compileall.compile_dir(str(ROOT / folder), quiet=1)


#: the longest tests (the tutorial and the README, minutes of real git and DVC), started first:
#: pytest-xdist workers run them while the others share the rest, instead of at the end
LONGEST = ("test_tutorial_runs_as_written", "test_readme_runs_as_written")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A ``slow`` test belongs to the slow tier with the ``pipeline`` tests: the fast tier,
    ``pytest -m "not pipeline"``, leaves both out; ``pytest`` runs everything. The order: the
    longest test first, then the others in file order (every pytest-xdist worker collects
    the same order)."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("pipeline"):
            item.add_marker(pytest.mark.pipeline)

    items.sort(key=lambda item: item.originalname not in LONGEST)     # stable: the rest in order


def pytest_report_header(config):
    return (f"hypothesis profile: {budget.PROFILE} (CI={os.environ.get('CI', '')!r}; "
            f"SKILLRET_HYPOTHESIS overrides)")


def conformance_files(where: Path = CONFORMANCE) -> Path:
    """``where`` if trec_eval's test files are there. Missing, the tests that need them fail
    under CI (``CI=true``: a CI that skips them would pass without checking anything) and skip
    elsewhere, with a one-line reason."""
    if not (where / "qrels.test").is_file():
        reason = (f"trec_eval conformance files not found at {where} "
                  f"(expected ../shared/conformance/trec_eval beside the project)")
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(f"CI=true: {reason}", pytrace=False)
        pytest.skip(reason)
    return where


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory) -> Path:
    """Where the states built once for the session live (``sample_pipeline.once``): the
    session's temporary folder, the same for every pytest-xdist worker."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def sample_pipeline(shared_dir) -> sample.Reproduced:
    """The sample pipeline reproduced once for the session (tests/sample_pipeline.py): read it,
    or work on a copy (``sample_pipeline.copy``), never change it."""
    return sample.build_once(shared_dir / "sample-pipeline")


@pytest.fixture(scope="session")
def sample_revisions(sample_pipeline, shared_dir) -> Path:
    """The sample with a DVC remote, ``main`` and a branch ``low-k1`` pushed
    (``sample_pipeline.build_revisions``), once for the session: clone it, never change it."""
    return sample.once(shared_dir / "sample-revisions",
                       lambda base: sample.build_revisions(base, sample_pipeline.path))


@pytest.fixture
def conformance() -> Path:
    """trec_eval's own test files, read in place (never copied into the project)."""
    return conformance_files()
