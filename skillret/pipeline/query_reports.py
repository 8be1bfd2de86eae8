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
    stores them: 439k rows in ~10 ms instead of ~70 ms decoding every string); the rows of the
    few queries a report shows are decoded by :func:`_rows_of`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(path, read_dictionary=["query_id", "skill_id"]).read(
            columns=["query_id", "skill_id", "score"])
    except (pa.ArrowInvalid, OSError, KeyError) as exc:
        raise InputError(path, f"not a canonical run ({str(exc).splitlines()[0]})") from None
    return table


def _rows_of(table, wanted: list[str]):
    """(query_id, skill_id, score) of ``wanted``'s rows, in the file's order, ids decoded: what
    :func:`skillret.analysis.queries.rankings` takes (it ranks each query's rows alone, so the
    other queries' rows change nothing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from skillret.columnar import arrow

    wanted_ids = arrow.strings(sorted(wanted))
    masks = []
    for chunk in table.column("query_id").chunks:
        if isinstance(chunk, pa.DictionaryArray):      # by the dictionary: a few thousand ids
            known = pc.is_in(chunk.dictionary, value_set=wanted_ids)
            masks.append(pc.fill_null(pc.take(known, chunk.indices), False))
        else:
            masks.append(pc.fill_null(pc.is_in(chunk, value_set=wanted_ids), False))
    kept = table.filter(pa.chunked_array(masks, type=pa.bool_()))

    def decoded(name):
        column = kept.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(pa.string())
        return column.combine_chunks()
    return decoded("query_id"), decoded("skill_id"), kept.column("score").to_numpy()


def query_reports(runs: list[str], baseline: str, tables: dict, patterns: list[str],
                  qrels: str | os.PathLike, metric: str, *, queries_file=None,
                  skills_file=None, shown: int = SHOWN) -> dict[str, str]:
    """``{run: Markdown}`` for every run but the baseline (computed, not written). ``tables``:
    each run's per-query table, a path or the :class:`~skillret.io.per_query.PerQuery` the
    compare stage loaded (holding ``metric``)."""
    from skillret.analysis import queries
    from skillret.io.labels import read_labels
    from skillret.io.per_query import read_table_file
    from skillret.io.readers import read_qrels
    from skillret.render.queries import markdown

    others = [r for r in runs if r != baseline]
    if not others:
        return {}

    def table_of(run):
        table = tables[run]
        return table if hasattr(table, "values") else read_table_file(table, [metric])

    judgments = read_qrels(qrels)
    base_table = table_of(baseline)
    base_run = _columns(canonical_path(patterns, baseline))
    reports = {}
    for run in others:
        selected = queries.select(base_table, table_of(run), metric, worst=shown, best=shown)
        wanted = selected.chosen()
        ranked_a = queries.rankings(*_rows_of(base_run, wanted), wanted)
        ranked_b = queries.rankings(*_rows_of(_columns(canonical_path(patterns, run)), wanted),
                                    wanted)
        reports[run] = queries.explain(selected, judgments, ranked_a, ranked_b,
                                       label_a=baseline, label_b=run)
    wanted = sorted({q.query_id for r in reports.values() for q in r.losses + r.gains})
    texts = _labels(queries_file, "query", wanted, read_labels)
    skills = sorted({s for r in reports.values() for s in queries.shown_skill_ids(r)})
    names = _labels(skills_file, "name", skills, read_labels)
    out = {}
    for run, report in reports.items():
        for q in report.losses + report.gains:
            q.text = texts.get(q.query_id)
        out[run] = markdown(queries.name_skills(report, names))
    return out


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


__all__ = ["query_reports", "write_reports", "canonical_path", "SHOWN"]
