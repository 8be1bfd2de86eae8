"""Per-query tables of the registered runs at a git revision, read through DVC.

Where a revision keeps its per-query tables is read from that revision itself: the runs are the
names under ``runs:`` in its ``params.yaml``, and each run's table is the output of its
``dvc.lock`` whose path has a ``per_query`` directory and the run's name as its stem
(``build/per_query/<run>.tsv`` or ``outputs/per_query/<run>.tsv``, whichever layout the revision
has). The table's bytes come from DVC: the local cache, or the configured remote. The workspace
(revision ``None``) is read from disk.
"""

from __future__ import annotations

import io
import os
from pathlib import Path, PurePosixPath

from skillret.errors import ConfigError, InputError

WORKSPACE = "workspace"


class RevisionFiles:
    """Files of a project at one revision (``None``: the workspace on disk)."""

    def __init__(self, root: str | os.PathLike, rev: str | None):
        self.root = Path(root)
        self.rev = rev
        self.label = rev or WORKSPACE
        self._fs = None
        if rev is not None:
            try:
                from dvc.api import DVCFileSystem
                from dvc.scm import SCM
            except ImportError:
                raise ConfigError(f"{rev}: reading a revision needs DVC, which is not "
                                  f"installed: pip install 'skillret-eval[pipeline]'") from None

            try:  # as DVC resolves it: branches, tags, commits, remote branches, experiments
                SCM(os.fspath(self.root)).resolve_rev(rev)
            except Exception:
                raise ConfigError(f"{rev}: not a revision of the git repository at "
                                  f"{self.root}") from None
            try:
                self._fs = DVCFileSystem(os.fspath(self.root), rev=rev)
            except Exception as exc:  # not a DVC project, a broken config...
                raise ConfigError(f"{rev}: cannot open the DVC project at {self.root} "
                                  f"({type(exc).__name__}: {exc})".splitlines()[0]) from None

    def exists(self, path: str) -> bool:
        if self._fs is None:
            return (self.root / path).is_file()
        return self._fs.exists(path)

    def read_bytes(self, path: str) -> bytes:
        if self._fs is None:
            return (self.root / path).read_bytes()
        with self._fs.open(path, "rb") as fh:
            return fh.read()

    def yaml(self, path: str) -> dict:
        from skillret.pipeline.params import safe_yaml

        if not self.exists(path):
            return {}
        data = safe_yaml(self.read_bytes(path)) or {}
        if not isinstance(data, dict):
            raise InputError(f"{self.label}:{path}", "expected a mapping at the top level")
        return data


def fetch_hint(files: RevisionFiles, path: str) -> str:
    if files.rev is None:
        return f"fetch it: `dvc pull {path}`, or make it: `dvc repro`"
    return (f"fetch it: `dvc fetch --all-commits {path}`, or make it: "
            f"`git checkout {files.rev} && dvc repro`")


def per_query_paths(files: RevisionFiles) -> tuple[list[str], dict[str, str]]:
    """The runs the revision's pipeline scores, registered (``runs:``) then fused (``fuse:``),
    in params.yaml order, and the per-query table of each in dvc.lock."""
    params = files.yaml("params.yaml")
    runs: list[str] = []
    for section, what in (("runs", "run names to files"), ("fuse", "fused run names to "
                                                                   "their settings")):
        names = params.get(section) or {}
        if not isinstance(names, dict):
            raise InputError(f"{files.label}:params.yaml", f"'{section}' must map {what}")
        runs += [str(name) for name in names]
    lock = files.yaml("dvc.lock").get("stages") or {}
    tables: dict[str, str] = {}
    for stage in lock.values():
        for out in (stage or {}).get("outs") or []:
            path = PurePosixPath(str(out.get("path", "")))
            if "per_query" in path.parts[:-1] and path.stem in runs:
                tables[path.stem] = path.as_posix()
    return runs, tables


def load_tables(files: RevisionFiles, names: list[str], metrics: list[str]) -> dict:
    """``{name: PerQuery}`` for ``names`` at this revision; one-line errors when data is missing."""
    from skillret.io.per_query import read_table

    registered, paths = per_query_paths(files)
    out = {}
    for name in names:
        if name not in registered:
            raise ConfigError(f"{files.label}: no run named {name!r} in params.yaml "
                              f"(registered or fused: {', '.join(registered) or 'none'})")
        path = paths.get(name)
        if path is None:
            raise InputError(f"{files.label}:dvc.lock",
                             f"no per-query table of run {name!r} (the pipeline was not "
                             f"reproduced at this revision)",
                             hint=f"run `dvc repro` and commit dvc.lock"
                                  f"{'' if files.rev is None else ' at ' + files.rev}")
        data = _read_data(files, path)
        source = path if files.rev is None else f"{files.rev}:{path}"
        out[name] = read_table(io.BytesIO(data), metrics, source,
                               parquet=path.endswith((".parquet", ".pq")))
    return out


def _read_data(files: RevisionFiles, path: str) -> bytes:
    try:
        return files.read_bytes(path)
    except Exception:  # not on disk; dvc: not cached and no remote, missing on the remote...
        reason = ("per-query table not in the workspace" if files.rev is None else
                  "per-query table neither in the local DVC cache nor on a reachable remote")
        raise InputError(f"{files.label}:{path}", reason, hint=fetch_hint(files, path)) from None


__all__ = ["RevisionFiles", "per_query_paths", "load_tables", "WORKSPACE"]
