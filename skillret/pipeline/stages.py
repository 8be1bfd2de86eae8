"""What the stages over every run do, from ``params.yaml`` and the paths their ``cmd`` names:
``curves``, ``compare`` and ``breakdown_plot``, and the run list they share (:func:`stage_runs`).

One function per stage; each reads the params keys the stage lists, computes everything, and
writes its outputs last (atomically). The stages that run a step on one input are beside their
steps: ``normalize_qrels`` and ``score@<run>`` in :mod:`skillret.pipeline.steps`, ``fuse@<name>``
in :mod:`skillret.pipeline.fused_runs`. The stage's entry point, which parses the command line
and prints, is in :mod:`skillret.cli.stages`; ``stages/<name>.py`` hands it argv.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from skillret.errors import ConfigError
from skillret.pipeline.compare_params import compare_settings
from skillret.pipeline.params import stage_runs

def curves(params_path, folder, output) -> list[dict]:
    """Stage ``curves``: every run's metric-vs-K records in one file."""
    from skillret.pipeline.params import load_yaml

    return collect_curves(folder, output, stage_runs(load_yaml(params_path)))


def collect_curves(folder: str | os.PathLike, output: str | os.PathLike, runs) -> list[dict]:
    """The plot records of ``runs`` (``<folder>/<run>.json``) in one list, each with its
    ``run``, runs sorted by name: the data of the chart that lays every run's curve over the
    others. Files of runs no longer registered are left out."""
    import json

    from skillret.io.atomic import write_json

    records = []
    for name in sorted(runs):
        path = Path(folder) / f"{name}.json"
        records += [{"run": name, **row} for row in json.loads(path.read_text())]
    write_json(output, records)
    return records


def breakdown_plot(params_path, metrics_folder, output) -> list[dict]:
    """Stage ``breakdown_plot``: every run's breakdown (``eval.breakdown``) as plot records."""
    from skillret.analysis.breakdown import collect_plot
    from skillret.io.atomic import write_json
    from skillret.pipeline.params import load_yaml

    runs = stage_runs(load_yaml(params_path))
    records = collect_plot({run: Path(metrics_folder) / f"{run}.json" for run in runs})
    write_json(output, records)
    return records


def compare(params_path, per_query_folder, output, markdown, qrels=None, queries=None,
            canonical=()):
    """Stage ``compare``: every run against ``compare.baseline``, from the per-query tables;
    with ``queries`` (a folder), also each run's largest per-query changes against the baseline
    (``<queries>/<run>.md``, from the canonical runs at ``canonical``, patterns with ``{}`` for
    the run's name); returns (comparison, notes, settings)."""
    from skillret.pipeline.params import load_yaml

    params = load_yaml(params_path)
    runs = stage_runs(params)
    tables = {name: Path(per_query_folder) / f"{name}.tsv" for name in runs}
    settings = compare_settings(params.get("compare"), params_path)
    strata = stage_strata(params, params_path, qrels, settings["metrics"])
    comparison, notes = compare_registered(runs, tables, settings, output=output,
                                           markdown_path=markdown, strata=strata)
    if queries is not None:
        from skillret.pipeline.query_reports import query_reports, write_reports
        if qrels is None:
            raise ConfigError("the compare stage needs --qrels for its query reports")
        data = params.get("data") or {}
        write_reports(queries, query_reports(
            runs, comparison.result["baseline"], tables, list(canonical), qrels,
            settings["metrics"][0], queries_file=data.get("queries"),
            skills_file=data.get("skills")))
    return comparison, notes, settings


def compare_registered(runs: list[str], tables: dict[str, str], settings: dict,
                       *, output=None, markdown_path=None,
                       strata=None) -> tuple:
    """The compare stage: every registered run against ``settings["baseline"]`` (default: the
    first run), from the per-query tables the score stage wrote; outputs written last."""
    if not runs:
        raise ConfigError("no run registered under runs: in params.yaml")
    baseline = settings.get("baseline") or runs[0]
    if baseline not in runs:
        raise ConfigError(f"compare.baseline: unknown run {baseline!r} "
                          f"(runs: {', '.join(runs)})")
    from skillret.analysis.compare import DEFAULTS, compare
    from skillret.io.per_query import read_table_file
    from skillret.render.compare import write_comparison

    metrics = settings["metrics"]
    loaded = {n: read_table_file(tables[n], metrics) for n in runs}
    others = {n: t for n, t in loaded.items() if n != baseline}
    kwargs = {k: settings[k] for k in DEFAULTS}
    comparison, notes = compare((baseline, loaded[baseline]), others, metrics, **kwargs)
    if strata is not None:  # eval.breakdown: the tests within strata (skillret.analysis.breakdown)
        comparison.result["breakdown"] = strata(comparison, **kwargs)
    write_comparison(comparison, output, markdown_path)
    return comparison, notes


def stage_strata(params: dict, source: str, qrels: str | os.PathLike | None,
                 metrics: Sequence[str]):
    """For the compare stage: ``eval.breakdown``'s facets (``skill_category`` from
    ``data.skills``, any other from ``data.queries``), as a function of a comparison giving
    :func:`stratified_tests`; None when ``eval.breakdown`` is empty."""
    from skillret.analysis.breakdown import load_needed_facets, stratified_tests
    from skillret.pipeline.params import EvalParams
    from skillret.scoring.names import parse_metric

    facets = EvalParams.from_mapping(params.get("eval"), source).breakdown
    if not facets:
        return None
    if qrels is None:
        raise ConfigError("eval.breakdown: the compare stage needs --qrels for the strata")
    from skillret.io.readers import read_qrels

    data = params.get("data") or {}
    wanted = load_needed_facets(facets, data.get("queries"), data.get("skills"))
    loaded_qrels = read_qrels(qrels)
    level = parse_metric(metrics[0]).rel

    def tests(comparison, **settings):
        return stratified_tests(comparison, wanted, loaded_qrels, level=level, **settings)
    return tests
