"""For the compare stage: ``reports/queries/<run>.md``, each run against the baseline, the
queries whose metric changed most (``skillret-eval queries`` between the two runs, Markdown).

The metric is the first of ``compare.metrics`` (the params the stage declares); once
``eval.headline`` lands in params.yaml and in the stage's params, use
:func:`skillret.pipeline.sources.headline_metrics` here as ``report`` does.
"""

from __future__ import annotations

import os
from pathlib import Path

from skillret.errors import InputError

SHOWN = 10  # largest losses, and largest gains, per run


def canonical_path(patterns: list[str], run: str) -> Path:
    """The first of ``patterns`` (``{}``: the run's name) that is a file."""
    for pattern in patterns:
        path = Path(pattern.replace("{}", run))
        if path.is_file():
            return path
    raise InputError(patterns[0].replace("{}", run) if patterns else run,
                     f"no canonical run of {run!r}", hint="run dvc repro")


def _columns(path: Path):
    """A canonical run's query_id, skill_id and score, the ids as dictionaries (read as Parquet
    stores them: 439k rows in ~10 ms instead of ~70 ms decoding every string), as
    :class:`~skillret.analysis.query_rows.KeptRows`, which decodes the reported queries' skills
    only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from skillret.analysis.query_rows import KeptRows

    try:
        table = pq.ParquetFile(path, read_dictionary=["query_id", "skill_id"]).read(
            columns=["query_id", "skill_id", "score"])
    except (pa.ArrowInvalid, OSError, KeyError) as exc:
        raise InputError(path, f"not a canonical run ({str(exc).splitlines()[0]})") from None
    return KeptRows.of_table(table)


def report_keys(runs: list[str], baseline: str, table_paths: dict, patterns: list[str],
                qrels_path, metric: str, *, queries_file=None, skills_file=None,
                shown: int = SHOWN) -> dict[str, str]:
    """``{run: key}`` for every run but the baseline: the sha256 of everything its report is
    made from, so that a report kept under its key (:class:`~skillret.analysis.memo.
    PairedTestMemo`'s texts) is the report computed again. The key covers the package's code
    (every file of ``skillret``), the metric and the number shown, both runs' names, canonical
    files and per-query tables (``table_paths``), the canonical qrels and the files the labels
    come from. Hashing the 31 canonical runs of 30 SkillRet-sized runs costs about 0.1 s; reading
    them to report costs several times that."""
    import hashlib

    from skillret.io.hashing import sha256, tree_sha256

    others = [r for r in runs if r != baseline]
    if not others:
        return {}

    def files(run: str) -> list[str]:
        return [run, sha256(canonical_path(patterns, run)), sha256(table_paths[run])]

    shared = hashlib.sha256()
    for part in ["skillret query report 1", tree_sha256(Path(__file__).resolve().parents[1]),
                 metric, str(shown), sha256(qrels_path),
                 *(sha256(p) if p and Path(p).is_file() else "-"
                   for p in (queries_file, skills_file)), *files(baseline)]:
        shared.update(part.encode() + b"\0")
    keys = {}
    for run in others:
        digest = shared.copy()
        for part in files(run):
            digest.update(part.encode() + b"\0")
        keys[run] = digest.hexdigest()
    return keys


def query_reports(runs: list[str], baseline: str, tables: dict, patterns: list[str],
                  qrels, metric: str, *, queries_file=None,
                  skills_file=None, shown: int = SHOWN, keys: dict | None = None,
                  memo=None) -> dict[str, str]:
    """``{run: Markdown}`` for every run but the baseline (computed, not written). ``tables``:
    each run's :class:`~skillret.io.per_query.PerQuery` (holding ``metric``), as the compare
    stage loaded them; ``qrels``: a path or loaded :class:`~skillret.columnar.qrels.Qrels`.
    With ``keys`` (:func:`report_keys`) and ``memo`` (a
    :class:`~skillret.analysis.memo.PairedTestMemo`), a report the memo holds under its run's
    key is read from it, and every report computed is kept there."""
    from skillret.analysis import queries
    from skillret.io.labels import read_labels
    from skillret.io.readers import read_qrels
    from skillret.render.queries import markdown

    others = [r for r in runs if r != baseline]
    if not others:
        return {}
    known = {}
    if memo is not None and keys is not None:
        known = {run: text for run in others
                 if (text := memo.text(keys[run])) is not None}
    if len(known) == len(others):
        return {run: known[run] for run in others}
    judgments = read_qrels(qrels)
    base_run = _columns(canonical_path(patterns, baseline))
    reports = {}
    for run in others:
        if run in known:
            continue
        selected = queries.select(tables[baseline], tables[run], metric, worst=shown,
                                  best=shown)
        wanted = selected.chosen()
        ranked_a = base_run.rankings(wanted)
        ranked_b = _columns(canonical_path(patterns, run)).rankings(wanted)
        reports[run] = queries.explain(selected, judgments, ranked_a, ranked_b,
                                       label_a=baseline, label_b=run)
    wanted = sorted({q.query_id for r in reports.values() for q in r.losses + r.gains})
    texts = _labels(queries_file, "query", wanted, read_labels)
    skills = sorted({s for r in reports.values() for s in queries.shown_skill_ids(r)})
    names = _labels(skills_file, "name", skills, read_labels)
    computed = {}
    for run, report in reports.items():
        for q in report.losses + report.gains:
            q.text = texts.get(q.query_id)
        computed[run] = markdown(queries.name_skills(report, names))
        if memo is not None and keys is not None:
            memo.keep_text(keys[run], computed[run])
    return {run: known[run] if run in known else computed[run] for run in others}


def _labels(path, field: str, wanted: list[str], read_labels) -> dict[str, str]:
    if not path or not wanted:
        return {}
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such file")
    return read_labels(path.read_bytes(), str(path), field, wanted)


def write_reports(folder: str | os.PathLike, reports: dict[str, str]) -> None:
    """Each run's report as ``<folder>/<run>.md`` (atomically, with the stage's other outputs);
    the reports of runs no longer compared are removed."""
    from skillret.io.atomic import write_text

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for run, text in reports.items():
        write_text(folder / f"{run}.md", text)
    for stale in sorted(folder.glob("*.md")):
        if stale.stem not in reports:
            stale.unlink()


__all__ = ["query_reports", "report_keys", "write_reports", "canonical_path", "SHOWN"]
