"""The sample pipeline, reproduced once per test session (the ``sample_pipeline`` fixture of
tests/conftest.py): the starting point of the pipeline tests in test_pipeline.py,
test_breakdown_pipeline.py and test_compare_revisions.py.

The project is this repository's pipeline files, package, example retriever and sample data
(:data:`PROJECT_FILES`), committed on ``main`` in a fresh git repository with ``dvc init``; in a
clean clone of it, ``dvc repro`` runs once and its outputs are committed. Tests read it, or work
on a copy (:func:`copy`), never change it.

Two more states are built from it once per session, the same way (:func:`once`): the sample
with a DVC remote and two branches (:func:`build_revisions`, for test_compare_revisions.py,
test_workflow.py, test_trust.py and test_pipeline.py's metrics diff), and the sample after a
parameter sweep (test_pipeline.py's ``swept``).
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
import dvc_server

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILES = ["dvc.yaml", "params.yaml", "stages", "skillret", "retrievers", "data",
                 "plots/templates", "plots/.gitignore", ".dvcignore", ".gitignore",
                 "outputs/.gitignore", "pyproject.toml", "README.md"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "skillret tests", "GIT_AUTHOR_EMAIL": "tests@skillret.invalid",
    "GIT_COMMITTER_NAME": "skillret tests", "GIT_COMMITTER_EMAIL": "tests@skillret.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "DVC_NO_ANALYTICS": "1",
}


@dataclass(frozen=True)
class Reproduced:
    path: Path          # the clean clone, reproduced and committed on main
    repro_stdout: str   # what its `dvc repro` printed (the stages it ran)


def shell(cwd: Path, command: str, home: Path | None = None) -> str:
    """Run a shell command as a user types it: this interpreter's tools (dvc, skillret-eval)
    first on PATH, the tests' git identity, ``home`` as HOME (no user git config leaks in); it
    must succeed. Its stdout."""
    path = dvc_server.path(f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env = {**os.environ, **GIT_ENV, "PATH": path}
    if home is not None:
        env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"))
    result = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                            env=env)
    assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def copy_project(target: Path) -> Path:
    for name in PROJECT_FILES:
        source, dest = ROOT / name, target / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, dest,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, dest)
    return target


def copy(source: Path, target: Path) -> Path:
    """A copy of a reproduced project (git history, DVC cache and outputs) to work on."""
    shutil.copytree(source, target, symlinks=True)
    return target


def _run(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({result.returncode}):\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


def build(base: Path) -> Reproduced:
    """The project committed in ``base/origin``, cloned to ``base/clone/project`` and reproduced
    there (a home of its own: no user git config leaks in)."""
    home = base / "home"
    home.mkdir(parents=True)
    env = {**os.environ, **GIT_ENV, "HOME": str(home),
           "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")}
    repo = copy_project(base / "origin")
    dvc = dvc_server.command()
    _run(repo, env, "git", "init", "-q", "-b", "main")
    _run(repo, env, *dvc, "init", "-q")
    _run(repo, env, *dvc, "config", "core.analytics", "false")
    _run(repo, env, "git", "add", "-A")
    _run(repo, env, "git", "commit", "-qm", "project")
    clone = base / "clone" / "project"
    clone.parent.mkdir()
    _run(clone.parent, env, "git", "clone", "-q", str(repo), str(clone))
    # bytecode, as a machine that writes it has after the first import (git ignores it): every
    # stage's process in this clone and in the tests' copies reads it instead of compiling
    _run(clone, env, sys.executable, "-m", "compileall", "-q", "skillret", "stages", "retrievers")
    result = _run(clone, env, *dvc, "repro")
    _run(clone, env, "git", "add", "-A")
    _run(clone, env, "git", "commit", "-qm", "repro")
    return Reproduced(clone, result.stdout)


def build_revisions(base: Path, reproduced: Path) -> Path:
    """A copy of the reproduced sample in ``base/origin`` with ``base/remote`` as its DVC
    remote: ``main`` pushed, then a branch ``low-k1`` (BM25's k1 from 1.5 to 0.9) reproduced,
    committed and pushed (left checked out), and a branch ``names-only`` (bm25-full on the
    skill names alone: significantly worse). Clone it to work on it."""
    home = base / "home"
    home.mkdir(parents=True)
    env = {**os.environ, **GIT_ENV, "HOME": str(home),
           "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")}
    repo = copy(reproduced, base / "origin")
    dvc = dvc_server.command()
    _run(repo, env, *dvc, "remote", "add", "-d", "store", str(base / "remote"))
    assert "Running stage" not in _run(repo, env, *dvc, "repro").stdout   # main is reproduced
    _run(repo, env, "bash", "-c", f"git add -A && git commit -qm remote && "
                                  f"{shlex.join(dvc)} push -q")
    _run(repo, env, "git", "checkout", "-qb", "low-k1")
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["retrieve"]["k1"] = 0.9
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    stages = _run(repo, env, *dvc, "repro").stdout
    assert "Running stage 'compare'" in stages  # a per-query table changed
    _run(repo, env, "bash", "-c", f"git add -A && git commit -qm k1=0.9 && "
                                  f"{shlex.join(dvc)} push -q")
    _run(repo, env, "git", "checkout", "-qb", "names-only", "main")  # a worse pull request
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["retrieve"]["configs"]["bm25-full"]["fields"] = ["name"]
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    _run(repo, env, *dvc, "repro")
    _run(repo, env, "bash", "-c", f"git add -A && git commit -qm names-only && "
                                  f"{shlex.join(dvc)} push -q && git checkout -q low-k1")
    return repo


def break_package(repo: Path) -> None:
    """A package change that raises in every score stage."""
    path = repo / "skillret" / "pipeline" / "run_stages.py"
    marker = "    check_name(name, \"fused run\" if fused else \"run\")"
    path.write_text(path.read_text().replace(
        marker, '    raise RuntimeError("broken package")\n' + marker, 1))


def once(base: Path, build: Callable[[Path], Path]) -> Path:
    """``build(base)``, once for every process that asks (the workers of one pytest-xdist
    session share it): the first builds under a lock, the others wait and read the path it
    returned. A state built this way is read or copied, never changed."""
    base.parent.mkdir(parents=True, exist_ok=True)
    done = base.parent / f"{base.name}.json"
    with open(base.parent / f"{base.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return Path(json.loads(done.read_text())["path"])
        if base.exists():                       # a build that failed in another worker
            shutil.rmtree(base)
        built = build(base)
        done.write_text(json.dumps({"path": str(built)}))
        return built


def build_once(base: Path) -> Reproduced:
    """:func:`build` in ``base``, once for the session (:func:`once`)."""
    def reproduce(base: Path) -> Path:
        built = build(base)
        (base / "repro.out").write_text(built.repro_stdout)
        return built.path

    path = once(base, reproduce)
    return Reproduced(path, (base / "repro.out").read_text())
