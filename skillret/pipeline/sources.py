"""What ``report`` and ``queries`` read from a project at a git revision (or the workspace).

At a revision, the runs are every run its pipeline scores: the names under ``runs:`` then
``fuse:`` of its ``params.yaml`` (:func:`skillret.pipeline.params.stage_runs`). Each run's
files are outputs of its ``dvc.lock``: the per-query table has a ``per_query`` directory in its
path and the run's name as stem; the canonical run is the ``.parquet`` output with the run's
name as stem outside ``per_query`` (``outputs/runs/<run>.parquet``,
``outputs/fused/<run>.parquet``); the judgments are the ``normalize_qrels`` stage's output.
Their bytes come through DVC (the local cache, or the remote), as
:mod:`skillret.pipeline.revisions` reads them; ``data.queries`` and ``data.skills`` are read
the same way (git-tracked files, usually).

The default metrics (:func:`headline_metrics`): ``compare.metrics`` (the family the compare
stage tests, which holds the first of ``eval.headline``), else ``eval.headline``, else the
recommended profile's four.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path, PurePosixPath

from skillret.errors import ConfigError, InputError

WORKSPACE_NAMES = ("workspace",)  # --rev workspace: the files on disk, as `dvc metrics diff`


def open_revision(root: str | os.PathLike, rev: str | None):
    """The project's files at ``rev`` (``None`` or ``workspace``: on disk)."""
    from skillret.pipeline.revisions import RevisionFiles

    return RevisionFiles(root, None if rev in WORKSPACE_NAMES else rev)


def params_at(files) -> dict:
    return files.yaml("params.yaml")


def run_names(files) -> list[str]:
    """Every run the pipeline scores at this revision: registered, then fused."""
    from skillret.pipeline.params import stage_runs

    params = params_at(files)
    for section in ("runs", "fuse"):
        if not isinstance(params.get(section) or {}, dict):
            raise InputError(f"{files.label}:params.yaml", f"'{section}' must be a mapping")
    return stage_runs(params)


def headline_metrics(params: dict) -> list[str]:
    """The metrics a report shows by default: ``compare.metrics``, the family the pipeline's
    compare stage tests (it holds ``eval.headline``'s first metric, which the compare stage
    checks), so that a report's markers are the tests the pipeline ran; else ``eval.headline``;
    else the recommended profile's four."""
    from skillret.analysis.compare import DEFAULT_METRICS, metric_names

    section = params.get("compare") or {}
    chosen = section.get("metrics") if isinstance(section, dict) else None
    key = "compare.metrics"
    if chosen is None:
        evaluation = params.get("eval") or {}
        chosen = evaluation.get("headline") if isinstance(evaluation, dict) else None
        key = "eval.headline"
    if chosen is None:
        chosen = list(DEFAULT_METRICS)
    if isinstance(chosen, str):
        chosen = [chosen]
    if not isinstance(chosen, list) or not all(isinstance(m, str) for m in chosen):
        raise ConfigError(f"params.yaml: {key} must be a list of metric names")
    return metric_names(chosen)


def compare_section(files) -> dict:
    """The ``compare:`` settings of this revision, checked, defaults filled in."""
    from skillret.pipeline.compare_params import compare_settings

    return compare_settings(params_at(files).get("compare"), f"{files.label}:params.yaml")


def _lock_outputs(files) -> dict[str, list[str]]:
    """stage name -> its output paths, from this revision's dvc.lock."""
    lock = files.yaml("dvc.lock").get("stages") or {}
    return {str(name): [str(out.get("path", "")) for out in (stage or {}).get("outs") or []]
            for name, stage in lock.items()}


def _not_reproduced(files, what: str) -> InputError:
    return InputError(f"{files.label}:dvc.lock",
                      f"no {what} (the pipeline was not reproduced at this revision)",
                      hint=f"run `dvc repro` and commit dvc.lock"
                           f"{'' if files.rev is None else ' at ' + files.rev}")


def _read(files, path: str, what: str) -> bytes:
    from skillret.pipeline.revisions import fetch_hint

    try:
        return files.read_bytes(path)
    except Exception:  # not on disk; dvc: not cached and no remote, missing on the remote...
        reason = (f"{what} not in the workspace" if files.rev is None else
                  f"{what} neither in the local DVC cache nor on a reachable remote")
        raise InputError(f"{files.label}:{path}", reason, hint=fetch_hint(files, path)) from None


def _output_of(files, name: str, per_query: bool) -> str | None:
    for outs in _lock_outputs(files).values():
        for out in outs:
            path = PurePosixPath(out)
            if path.stem != name or ("per_query" in path.parts[:-1]) != per_query:
                continue
            if per_query or path.suffix in (".parquet", ".pq"):
                return path.as_posix()
    return None


def _check_known(files, names: list[str]) -> None:
    known = run_names(files)
    for name in names:
        if name not in known:
            raise ConfigError(f"{files.label}: no run named {name!r} in params.yaml "
                              f"(runs: {', '.join(known) or 'none'})")


def per_query_tables(files, names: list[str], metrics: list[str]) -> dict:
    """``{name: PerQuery}``: each run's per-query table at this revision (registered or fused),
    as ``compare --rev`` reads them (:func:`skillret.pipeline.revisions.load_tables`)."""
    from skillret.pipeline.revisions import load_tables

    return load_tables(files, names, metrics)


def canonical_run(files, name: str):
    """The run's canonical Parquet (query_id, skill_id, score, rank) at this revision, as a
    pyarrow table, and the path it was read from."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _check_known(files, [name])
    path = _output_of(files, name, per_query=False)
    if path is None:
        raise _not_reproduced(files, f"canonical run of {name!r}")
    source = path if files.rev is None else f"{files.rev}:{path}"
    try:
        table = pq.ParquetFile(io.BytesIO(_read(files, path, "canonical run"))).read(
            columns=["query_id", "skill_id", "score"])
    except (pa.ArrowInvalid, OSError, KeyError) as exc:
        raise InputError(source, f"not a canonical run ({str(exc).splitlines()[0]})") from None
    return table, source


def qrels_at(files):
    """The canonical judgments the pipeline scored with at this revision (``normalize_qrels``'
    output)."""
    from skillret.io.readers import read_qrels

    outs = [out for out in _lock_outputs(files).get("normalize_qrels") or []
             if not out.endswith(".json")]  # the other output: its counts, a metrics file
    if not outs:
        raise _not_reproduced(files, "normalize_qrels output (the canonical qrels)")
    path = outs[0]
    data = _read(files, path, "canonical qrels")
    if files.rev is None:
        return read_qrels(str(files.root / path))
    with tempfile.TemporaryDirectory(prefix="skillret-qrels-") as tmp:
        local = Path(tmp) / PurePosixPath(path).name
        local.write_bytes(data)
        return read_qrels(str(local))


def data_file(files, key: str) -> tuple[bytes, str] | None:
    """``data.<key>`` of this revision's params (``queries``, ``skills``): its bytes and a name
    for messages; None when the params name no such file."""
    data = params_at(files).get("data") or {}
    path = data.get(key) if isinstance(data, dict) else None
    if not path:
        return None
    source = path if files.rev is None else f"{files.rev}:{path}"
    if not files.exists(str(path)):
        raise InputError(source, f"data.{key}: no such file at {files.label}")
    return _read(files, str(path), f"data.{key}"), source


__all__ = ["open_revision", "run_names", "headline_metrics", "compare_section",
           "per_query_tables", "canonical_run", "qrels_at", "data_file", "WORKSPACE_NAMES"]
