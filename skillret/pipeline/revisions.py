"""What `compare --rev`, `report --rev` and `queries --rev` read of a project at a git revision
(or in the workspace): its params, its runs (`runs:` then `fuse:`), and their files through DVC,
found among its `dvc.lock` outputs by stem, whatever the layout was then.
"""

from __future__ import annotations

import functools
import io
import json
import os
import tempfile
from pathlib import Path, PurePosixPath

from skillret.errors import ConfigError, InputError
from skillret.io.per_query import read_table
from skillret.io.readers import read_qrels
from skillret.pipeline.layout import read_canonical
from skillret.pipeline.params import compare_section, names, safe_yaml, stage_runs
from skillret.scoring.names import metric_names
from skillret.scoring.profiles import BUILTIN

WORKSPACE = "workspace"   # --rev workspace: the files on disk, as `dvc metrics diff` names them


class Revision:
    """A project's files at one revision (`None` or `workspace`: the workspace on disk)."""

    def __init__(self, root: str | os.PathLike, rev: str | None):
        self.root = Path(root)
        self.rev = None if rev in (None, WORKSPACE) else rev
        self.label = self.rev or WORKSPACE
        self._fs = None
        if self.rev is not None:
            try:
                from dvc.api import DVCFileSystem  # dvc: a second's import, for --rev only
                from dvc.scm import SCM, resolve_rev
            except ImportError:
                raise ConfigError(f"{rev}: reading a revision needs DVC, which is not "
                                  f"installed: pip install 'skillret-eval[pipeline]'") from None
            try:  # as DVC resolves it: branches, tags, commits, remote branches, experiments
                commit = resolve_rev(SCM(os.fspath(self.root)), rev)
            except Exception:
                raise ConfigError(f"{rev}: not a revision of the git repository at "
                                  f"{self.root}") from None
            try:
                self._fs = DVCFileSystem(os.fspath(self.root), rev=commit)
            except Exception as exc:  # not a DVC project, a broken config...
                raise ConfigError(f"{rev}: cannot open the DVC project at {self.root} "
                                  f"({type(exc).__name__}: {exc})".splitlines()[0]) from None

    def exists(self, path: str) -> bool:
        return (self.root / path).is_file() if self._fs is None else self._fs.exists(path)

    def read_bytes(self, path: str, what: str = "file") -> bytes:
        """The file's bytes; one line naming it, and how to get it, when unreadable."""
        try:
            if self._fs is None:
                return (self.root / path).read_bytes()
            with self._fs.open(path, "rb") as fh:
                return fh.read()
        except Exception:  # not on disk; dvc: not cached and no remote, missing on the remote
            if self.rev is None:
                reason = f"{what} not in the workspace"
                fetch = f"fetch it: `dvc pull {path}`, or make it: `dvc repro`"
            else:
                reason = f"{what} neither in the local DVC cache nor on a reachable remote"
                fetch = (f"fetch it: `dvc fetch --all-commits {path}`, or make it: "
                         f"`git checkout {self.rev} && dvc repro`")
            raise InputError(f"{self.label}:{path}", reason, hint=fetch) from None

    def yaml(self, path: str) -> dict:
        if not self.exists(path):
            return {}
        data = safe_yaml(self.read_bytes(path)) or {}
        if not isinstance(data, dict):
            raise InputError(f"{self.label}:{path}", "expected a mapping at the top level")
        return data

    def source(self, path: str) -> str:
        """`path` as messages name it: `REV:path` at a revision."""
        return path if self.rev is None else f"{self.rev}:{path}"

    @property
    def params(self) -> dict:
        if not self.exists("params.yaml"):
            where = (f"{self.root.resolve()}" if self.rev is None
                     else f"{self.rev} (in {self.root.resolve()})")
            raise ConfigError(f"no params.yaml in {where}: run this in a skillret-eval "
                              f"project's folder (or --repo DIR), or give the files: "
                              f"--qrels FILE --run NAME=FILE ...")
        return self.yaml("params.yaml")

    def runs(self) -> list[str]:
        """Every run the pipeline scores at this revision: registered, then fused."""
        return stage_runs(self.params, f"{self.label}:params.yaml")

    def compare_settings(self) -> dict:
        return compare_section(self.params, f"{self.label}:params.yaml")

    @functools.cached_property
    def _outputs(self) -> dict[str, list[str]]:
        """stage name -> its output paths, from this revision's dvc.lock."""
        lock = self.yaml("dvc.lock").get("stages") or {}
        return {str(name): [str(out.get("path", "")) for out in (stage or {}).get("outs") or []]
                for name, stage in lock.items()}

    def _not_reproduced(self, what: str) -> InputError:
        return InputError(f"{self.label}:dvc.lock",
                          f"no {what} (the pipeline was not reproduced at this revision)",
                          hint=f"run `dvc repro` and commit dvc.lock"
                               f"{'' if self.rev is None else ' at ' + self.rev}")

    def _output_of(self, name: str, per_query: bool = False, folder: str | None = None):
        """Run `name`'s output path in dvc.lock: its per-query table, its canonical Parquet, or
        (`folder`) its JSON in that folder; None when there is none."""
        for outs in self._outputs.values():
            for out in outs:
                path = PurePosixPath(out)
                if path.stem != name or ("per_query" in path.parts[:-1]) != per_query:
                    continue
                if folder is not None:
                    if folder in path.parts[:-1] and path.suffix == ".json" and self.exists(out):
                        return out
                elif per_query or path.suffix in (".parquet", ".pq"):
                    return path.as_posix()
        return None

    def _check_known(self, names: list[str]) -> None:
        known = self.runs()
        for name in names:
            if name not in known:
                raise ConfigError(f"{self.label}: no run named {name!r} in params.yaml "
                                  f"(registered or fused: {', '.join(known) or 'none'})")

    def per_query_tables(self, names: list[str], metrics: list[str]) -> dict:
        """`{name: PerQuery}` of `names` at this revision."""
        self._check_known(names)
        out = {}
        for name in names:
            path = self._output_of(name, per_query=True)
            if path is None:
                raise self._not_reproduced(f"per-query table of run {name!r}")
            data = self.read_bytes(path, "per-query table")
            out[name] = read_table(io.BytesIO(data), metrics, self.source(path))
        return out

    def canonical_run(self, name: str):
        """The run's canonical Parquet as a pyarrow table, and its name for messages."""
        self._check_known([name])
        path = self._output_of(name, per_query=False)
        if path is None:
            raise self._not_reproduced(f"canonical run of {name!r}")
        data = io.BytesIO(self.read_bytes(path, "canonical run"))
        return read_canonical(data, self.source(path)), self.source(path)

    @functools.cache
    def qrels(self):
        """The canonical judgments the pipeline scored with (`normalize_qrels`' output)."""
        outs = [out for out in self._outputs.get("normalize_qrels") or []
                if not out.endswith(".json")]  # the other output: its counts
        if not outs:
            raise self._not_reproduced("normalize_qrels output (the canonical qrels)")
        path = outs[0]
        if self.rev is None and self.exists(path):
            return read_qrels(str(self.root / path))
        data = self.read_bytes(path, "canonical qrels")  # one line, and how to get it, if absent
        with tempfile.TemporaryDirectory(prefix="skillret-qrels-") as tmp:
            local = Path(tmp) / PurePosixPath(path).name
            local.write_bytes(data)
            return read_qrels(str(local))

    def _record(self, name: str, folder: str, what: str) -> dict:
        """Run `name`'s git-tracked JSON output in `folder` (of its path), or {}."""
        path = self._output_of(name, folder=folder)
        return {} if path is None else json.loads(self.read_bytes(path, what))

    def contract(self, name: str) -> dict:
        """Run `name`'s metric contract, or {} when none was recorded."""
        return self._record(name, "validation", "validation report").get("contract") or {}

    @functools.cache
    def _metrics(self, name: str) -> dict:
        return self._record(name, "metrics", "metrics file")

    def judged(self, name: str) -> dict:
        """Run `name`'s Judged@K at the profiles' cutoffs (from its metrics file), or {}."""
        return self._metrics(name).get("judged") or {}

    def judgments(self, name: str) -> dict:
        """Run `name`'s judgments fingerprint, or {} when none was recorded."""
        return self._metrics(name).get("judgments") or {}

    def data_file(self, key: str) -> tuple[bytes, str] | None:
        """`data.<key>`: its bytes and a name for messages; None when not set."""
        data = self.params.get("data") or {}
        path = data.get(key) if isinstance(data, dict) else None
        if not path:
            return None
        if not self.exists(str(path)):
            raise InputError(self.source(str(path)), f"data.{key}: no such file at {self.label}")
        return self.read_bytes(str(path), f"data.{key}"), self.source(str(path))


def headline_metrics(params: dict) -> list[str]:
    """A report's default metrics: `compare.metrics`, else `eval.headline`, else the recommended
    profile's."""
    for section, key in (("compare", "metrics"), ("eval", "headline")):
        values = params.get(section)
        chosen = values.get(key) if isinstance(values, dict) else None
        if chosen is not None:
            return metric_names(names(chosen, f"{section}.{key}", "params.yaml", "metric names"))
    return metric_names(BUILTIN["recommended"].metrics)
