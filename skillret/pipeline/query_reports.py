"""`reports/queries/<run>.md` for the compare stage: each run's largest per-query changes
against the baseline."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from skillret.analysis import queries
from skillret.analysis.queries import KeptRows
from skillret.errors import InputError
from skillret.io.atomic import write_text
from skillret.io.facets import read_labels
from skillret.io.readers import read_qrels
from skillret.render.queries import markdown

SHOWN = 10  # largest losses, and largest gains, per run


def _canonical(patterns: list[str], run: str) -> KeptRows:
    """Run `run`'s rows, from the first of `patterns` (`{}`: the run's name) that is a file."""
    for pattern in patterns:
        path = Path(pattern.replace("{}", run))
        if path.is_file():
            return KeptRows.of_table(canonical_table(path, path))
    raise InputError(patterns[0].replace("{}", run) if patterns else run,
                     f"no canonical run of {run!r}", hint="run dvc repro")


def canonical_table(file, name) -> pa.Table:
    """A canonical run's ids (dictionary-encoded) and scores; `name`: the file's, for messages."""
    try:
        return pq.ParquetFile(file, read_dictionary=["query_id", "skill_id"]).read(
            columns=["query_id", "skill_id", "score"])
    except (pa.ArrowInvalid, OSError, KeyError) as exc:
        raise InputError(name, f"not a canonical run ({str(exc).splitlines()[0]})") from None


def query_reports(runs: list[str], baseline: str, tables: dict, patterns: list[str],
                  qrels, metric: str, *, queries_file=None, skills_file=None) -> dict[str, str]:
    """`{run: Markdown}` for every run but the baseline; `tables`: each run's `PerQuery`."""
    others = [r for r in runs if r != baseline]
    if not others:
        return {}
    judgments = read_qrels(qrels)
    base_run = _canonical(patterns, baseline)
    reports = {}
    for run in others:
        selected = queries.select(tables[baseline], tables[run], metric, worst=SHOWN, best=SHOWN)
        wanted = selected.chosen()
        ranked_a = base_run.rankings(wanted)
        ranked_b = _canonical(patterns, run).rankings(wanted)
        reports[run] = queries.explain(selected, judgments, ranked_a, ranked_b,
                                       label_a=baseline, label_b=run)
    wanted = sorted({q.query_id for r in reports.values() for q in r.losses + r.gains})
    texts = _labels(queries_file, "query", wanted)
    skills = sorted({s for r in reports.values() for s in queries.shown_skill_ids(r)})
    names = _labels(skills_file, "name", skills)
    for report in reports.values():
        for q in report.losses + report.gains:
            q.text = texts.get(q.query_id)
    return {run: markdown(queries.name_skills(report, names)) for run, report in reports.items()}


def _labels(path, field: str, wanted: list[str]) -> dict[str, str]:
    if not path or not wanted:
        return {}
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such file")
    return read_labels(path.read_bytes(), str(path), field, wanted)


def write_reports(folder: str | os.PathLike, reports: dict[str, str]) -> None:
    """Write `<folder>/<run>.md` each; reports of runs no longer compared are removed."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for run, text in reports.items():
        write_text(folder / f"{run}.md", text)
    for stale in sorted(folder.glob("*.md")):
        if stale.stem not in reports:
            stale.unlink()

