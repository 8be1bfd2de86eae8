"""What each pipeline stage does, from ``params.yaml`` and the paths its ``cmd`` names.

One function per stage of ``dvc.yaml``; each reads the params keys the stage lists, computes
everything, and writes its outputs last (atomically). The stage's entry point, which parses the
command line and prints, is in :mod:`skillret.cli.stages`; ``stages/<name>.py`` hands it argv.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from skillret.errors import ConfigError
from skillret.pipeline.compare_params import compare_settings
from skillret.pipeline.params import stage_runs


#: what a score@<run> stage runs: its script and the package (dvc.yaml lists them as deps of
#: the settings stage, whose record of them score@<run> depends on)
SCORE_SCRIPT = "stages/score.py"


def scoring_code() -> dict[str, str]:
    """The sha256 of the code a ``score@<run>`` stage runs: the package this process imported
    (the project's own ``skillret``: stages run as modules from the project root) and the stage
    script."""
    from skillret.io.hashing import sha256, tree_sha256

    package = Path(__file__).resolve().parents[1]          # skillret/, this module's package
    return {"skillret": tree_sha256(package),
            SCORE_SCRIPT: sha256(SCORE_SCRIPT) if Path(SCORE_SCRIPT).is_file() else None}


def settings(params_path, output=None, runs_output=None,
             run_settings=None) -> tuple[dict, list[str]]:
    """Stage ``settings``: what every run is scored with, and which runs there are, each in a
    small file that changes only when it does.

    ``reports/settings.json``: the sha256 of the code that scores (:func:`scoring_code`),
    ``eval`` (every profile's definition, the plot profile, the breakdown and the headline),
    ``validate.strict``, and the sha256 of the canonical qrels and of the data files the
    breakdown reads. Every ``score@<run>`` depends on it (and on its own run) rather than on
    the package, its script, these params and files one by one: a stage's entry in
    ``dvc.lock`` is what DVC re-reads after every stage, and each folder dependency is walked
    at every ``dvc repro``, so this keeps the lock (and DVC's time) small.
    ``reports/run_settings/<run>.json``, one per registered run: its path and options
    (``run_options.<run>``) and the sha256 of ``reports/settings.json``. This file is what
    ``score@<run>`` depends on, besides its run: it changes when the shared settings or that
    run's options do, and a run's options reach its stage without a params dependency (DVC
    parses ``params.yaml`` again for every stage that lists one, at every ``dvc repro``: at 100
    runs, a sixth of a no-op; docs/benchmarks.md). Files of runs no longer registered are
    removed.
    ``reports/runs.json``: the registered and fused runs' names, what the stages over every run
    depend on instead of ``runs`` and ``fuse``. All is checked here, once, before any run is
    scored: a bad profile, breakdown, headline, run name or run options entry is one line from
    this stage. The files are written together, or none is.
    """
    import hashlib

    from skillret.analysis.breakdown import load_needed_facets
    from skillret.io.atomic import OutputSet, dumps_json
    from skillret.pipeline import layout
    from skillret.pipeline.headline import headline_sources
    from skillret.pipeline.params import EvalParams, load_yaml, run_entry, validate_section
    from skillret.io.hashing import sha256
    from skillret.scoring.profiles import as_profiles as resolve

    params = load_yaml(params_path)
    runs = stage_runs(params)
    entries = [run_entry(params, name, params_path) for name in params.get("runs") or {}]
    evaluation = EvalParams.from_mapping(params.get("eval"), params_path)
    sources = headline_sources(evaluation, params_path)
    strict = validate_section(params.get("validate"), params_path)["strict"]
    profiles = resolve(evaluation.profiles, define=evaluation.define,
                       relevance_level=evaluation.relevance_level)
    data = params.get("data") or {}
    plan = load_needed_facets(evaluation.breakdown, data.get("queries"), data.get("skills"))
    inputs = {"qrels": layout.QRELS}
    if plan.skills is not None:
        inputs["skills"] = data["skills"]
    if plan.facets_file is not None:
        inputs["queries"] = data["queries"]
    record = {
        "code": scoring_code(),
        "eval": {"profiles": {p.name: p.describe() for p in profiles},
                 "plot_profile": evaluation.plot_profile, "breakdown": evaluation.breakdown,
                 "breakdown_profile": evaluation.breakdown_profile,
                 "headline": [f"{profile}.{metric}" for metric, profile in sources]},
        "validate": {"strict": strict},
        "inputs": {key: {"path": str(path), "sha256": sha256(path)}
                   for key, path in inputs.items()},
    }
    text = dumps_json(record)
    shared = hashlib.sha256(text.encode("utf-8")).hexdigest()
    folder = Path(run_settings or layout.RUN_SETTINGS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    options = params.get("run_options") or {}
    with OutputSet() as out:
        out.write_text(output or layout.SETTINGS, text)
        out.write_json(runs_output or layout.RUN_SET, runs)
        for entry in entries:
            out.write_json(folder / f"{entry.name}.json",
                           {"run": entry.name, "path": entry.path,
                            "options": options[entry.name] or {}, "settings_sha256": shared})
    names = {f"{entry.name}.json" for entry in entries}
    for stale in sorted(folder.glob("*.json")):
        if stale.name not in names:
            stale.unlink()
    return record, runs


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


def charts(params_path, folder=None, metrics_folder=None, output=None,
           breakdown_output=None) -> tuple[list[dict], list[dict]]:
    """Stage ``charts``: the data of the charts over every run, one file per chart: every
    run's metric-vs-K records (``plots/curves.json``) and every run's breakdown
    (``eval.breakdown``, ``plots/breakdown.json``). One stage, not one per chart: after each
    stage DVC re-reads and rewrites the whole ``dvc.lock``, and both charts change with any run."""
    from skillret.analysis.breakdown import collect_plot
    from skillret.io.atomic import OutputSet, write_json
    from skillret.pipeline import layout
    from skillret.pipeline.params import load_yaml

    runs = stage_runs(load_yaml(params_path))
    metrics = Path(metrics_folder or layout.METRICS_DIR)
    with OutputSet():  # both files are replaced together, or neither
        records = collect_curves(folder or layout.PLOTS_DIR, output or layout.CURVES, runs)
        bars = collect_plot({run: metrics / f"{run}.json" for run in runs})
        write_json(breakdown_output or layout.BREAKDOWN_PLOT, bars)
    return records, bars


def compare(params_path, per_query_folder=None, output=None, markdown=None, qrels=None, *,
            metrics_folder=None, headline_path=None, queries=None, memo_path=None):
    """Stage ``compare``: every run against ``compare.baseline``, from the per-query tables;
    then the headline (:mod:`skillret.pipeline.headline`) from the runs' metrics files and the
    verdicts; and each run's largest per-query changes against the baseline
    (``reports/queries/<run>.md``, from the canonical runs). Writes the comparison (JSON), its
    report (Markdown, with the tests within strata), the query reports and the headline,
    together; returns (comparison, notes, settings, headline, sources). The paired tests of the
    runs and strata that did not change since the last time are read from the memo
    (:mod:`skillret.analysis.memo`, ``layout.COMPARE_MEMO``): the same numbers, not computed
    again; so are the query reports whose runs, tables, qrels, labels and code did not change
    (:func:`~skillret.pipeline.query_reports.report_keys`)."""
    from skillret.analysis.memo import PairedTestMemo
    from skillret.io.atomic import write_json
    from skillret.io.per_query import read_table_file
    from skillret.io.readers import read_qrels
    from skillret.pipeline import layout
    from skillret.pipeline.headline import check_verdict, headline, headline_sources
    from skillret.pipeline.params import EvalParams, load_yaml
    from skillret.pipeline.query_reports import query_reports, report_keys, write_reports

    params = load_yaml(params_path)
    runs = stage_runs(params)
    evaluation = EvalParams.from_mapping(params.get("eval"), params_path)
    sources = headline_sources(evaluation, params_path)
    settings = compare_settings(params.get("compare"), params_path)
    check_verdict(sources, settings["metrics"], params_path)
    folder = Path(per_query_folder or layout.PER_QUERY_DIR)
    tables = {name: folder / f"{name}.tsv" for name in runs}
    judgments = read_qrels(qrels or layout.QRELS)          # read once: strata, query reports
    strata = stage_strata(params, params_path, judgments, settings["metrics"])
    memo = PairedTestMemo.load(memo_path or layout.COMPARE_MEMO)
    loaded = {n: read_table_file(tables[n], settings["metrics"]) for n in runs}  # read once
    comparison, notes = compare_registered(runs, loaded, settings,
                                           output=output or layout.COMPARE,
                                           markdown_path=markdown or layout.COMPARE_REPORT,
                                           strata=strata, tests=memo.paired_tests)
    data = params.get("data") or {}
    canonical = [layout.CANONICAL_RUN, layout.FUSED_OUTPUTS["normalized"]]
    labels = {"queries_file": data.get("queries"), "skills_file": data.get("skills")}
    keys = report_keys(runs, comparison.result["baseline"], tables, canonical,
                       qrels or layout.QRELS, settings["metrics"][0], **labels)
    write_reports(queries or layout.QUERY_REPORTS, query_reports(
        runs, comparison.result["baseline"], loaded, canonical, judgments,
        settings["metrics"][0], keys=keys, memo=memo, **labels))
    metrics_folder = Path(metrics_folder or layout.METRICS_DIR)
    table = headline(runs, {run: metrics_folder / f"{run}.json" for run in runs}, sources,
                     comparison.result)
    write_json(headline_path or layout.HEADLINE, table)
    memo.save(memo_path or layout.COMPARE_MEMO)
    return comparison, notes, settings, table, sources


def compare_registered(runs: list[str], loaded: dict, settings: dict,
                       *, output=None, markdown_path=None,
                       strata=None, tests=None) -> tuple:
    """The compare stage: every registered run against ``settings["baseline"]`` (default: the
    first run), from the per-query tables the score stage wrote (``loaded``: run ->
    :class:`~skillret.io.per_query.PerQuery` holding ``settings["metrics"]``); outputs written
    last."""
    if not runs:
        raise ConfigError("no run registered under runs: in params.yaml")
    baseline = settings.get("baseline") or runs[0]
    if baseline not in runs:
        raise ConfigError(f"compare.baseline: unknown run {baseline!r} "
                          f"(runs: {', '.join(runs)})")
    from skillret.analysis.compare import DEFAULTS, compare
    from skillret.render.compare import write_comparison

    metrics = settings["metrics"]
    others = {n: t for n, t in loaded.items() if n != baseline}
    kwargs = {k: settings[k] for k in DEFAULTS}
    comparison, notes = compare((baseline, loaded[baseline]), others, metrics, tests=tests,
                                **kwargs)
    if strata is not None:  # eval.breakdown: the tests within strata (skillret.analysis.breakdown)
        comparison.result["breakdown"] = strata(comparison, tests=tests, **kwargs)
    if markdown_path and "breakdown" in comparison.result:  # the strata's tests, in the report
        from skillret.render.breakdown import stratified_table
        from skillret.render.compare import markdown as render
        from skillret.io.atomic import write_text

        write_comparison(comparison, output)
        table = stratified_table(comparison.result["breakdown"], settings["correction"])
        write_text(markdown_path, render(comparison).rstrip("\n")
                   + "\n\n## Within strata (eval.breakdown)\n\n```\n" + table + "\n```\n")
    else:
        write_comparison(comparison, output, markdown_path)
    return comparison, notes


def stage_strata(params: dict, source: str, qrels,
                 metrics: Sequence[str]):
    """For the compare stage: ``eval.breakdown``'s facets (``skill_category`` from
    ``data.skills``, any other from ``data.queries``), as a function of a comparison giving
    :func:`stratified_tests`; None when ``eval.breakdown`` is empty. ``qrels``: a path or the
    loaded :class:`~skillret.columnar.qrels.Qrels`."""
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
    the_plan = load_needed_facets(facets, data.get("queries"), data.get("skills"))
    loaded_qrels = read_qrels(qrels)
    level = parse_metric(metrics[0]).rel

    def tests(comparison, **settings):
        return stratified_tests(comparison, the_plan, loaded_qrels, level=level, **settings)
    return tests
