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

COMPARE_KEYS = ("baseline", "metrics", "permutations", "bootstrap", "seed", "correction", "alpha")


def stage_runs(params: dict) -> list[str]:
    """The runs the pipeline scores: every registered run (``runs:``), then every fused run
    (``fuse:``), each name checked. The one list the aggregate stages (curves, compare,
    breakdown plot) work on."""
    from skillret.pipeline.params import check_name

    sections = (("runs", "run"), ("fuse", "fused run"))
    return [check_name(name, what) for section, what in sections
            for name in (params.get(section) or {})]


def score(params_path, run_name: str, run_file, qrels, outputs: dict | None = None, *,
          fused: bool = False):
    """Stage ``score@<run>``: validate the run (``runs.<run>``, or for a fused run
    ``run_file``, default its TREC file), then score it; returns (entry, validation report,
    scores, headline sources). ``outputs`` default to the run's paths in
    :mod:`skillret.pipeline.layout`."""
    from skillret.analysis.breakdown import plan_needed
    from skillret.pipeline import layout
    from skillret.pipeline.headline import headline_sources
    from skillret.pipeline.params import (EvalParams, RunEntry, check_name, load_yaml,
                                          run_entry, validate_section)
    from skillret.pipeline.steps import evaluate_registered_run

    check_name(run_name, "fused run" if fused else "run")  # before anything: it makes paths
    params = load_yaml(params_path)  # every section checked before any work
    evaluation = EvalParams.from_mapping(params.get("eval"), params_path)
    sources = headline_sources(evaluation, params_path)
    strict = validate_section(params.get("validate"), params_path)["strict"]
    data = params.get("data") or {}
    facets = plan_needed(evaluation.breakdown, data.get("queries"), data.get("skills"))
    if fused:
        run_file = run_file or layout.FUSED_RUN.format(run_name)
    entry = (RunEntry(run_name, run_file) if run_file
             else run_entry(params, run_name, params_path))
    outputs = {**layout.run_outputs(run_name, fused=fused), **(outputs or {})}
    report, scores = evaluate_registered_run(qrels or layout.QRELS, entry, outputs=outputs,
                                             eval_params=evaluation, strict=strict,
                                             facets=facets)
    return entry, report, scores, sources


def settings(params_path, output=None, runs_output=None) -> tuple[dict, list[str]]:
    """Stage ``settings``: what every run is scored with, and which runs there are, each in a
    small file that changes only when it does.

    ``reports/settings.json``: ``eval`` (every profile's definition, the plot profile, the
    breakdown and the headline), ``validate.strict``, and the sha256 of the canonical qrels and
    of the data files the breakdown reads. Every ``score@<run>`` depends on it (and on its own
    run) rather than on these params and files one by one: a stage's entry in ``dvc.lock`` is
    what DVC re-reads after every stage, so this keeps the lock (and DVC's time) small.
    ``reports/runs.json``: the registered and fused runs' names, what the stages over every run
    depend on instead of ``runs`` and ``fuse``. Both are checked here, once, before any run is
    scored: a bad profile, breakdown, headline or run name is one line from this stage.
    """
    from skillret.analysis.breakdown import plan_needed
    from skillret.io.atomic import write_json
    from skillret.pipeline import layout
    from skillret.pipeline.headline import headline_sources
    from skillret.pipeline.params import EvalParams, load_yaml, validate_section
    from skillret.pipeline.steps import resolve, sha256

    params = load_yaml(params_path)
    runs = stage_runs(params)
    evaluation = EvalParams.from_mapping(params.get("eval"), params_path)
    sources = headline_sources(evaluation, params_path)
    strict = validate_section(params.get("validate"), params_path)["strict"]
    profiles = resolve(evaluation.profiles, define=evaluation.define,
                       relevance_level=evaluation.relevance_level)
    data = params.get("data") or {}
    plan = plan_needed(evaluation.breakdown, data.get("queries"), data.get("skills"))
    inputs = {"qrels": layout.QRELS}
    if plan.skills is not None:
        inputs["skills"] = data["skills"]
    if plan.facets_file is not None:
        inputs["queries"] = data["queries"]
    record = {
        "eval": {"profiles": {p.name: p.describe() for p in profiles},
                 "plot_profile": evaluation.plot_profile, "breakdown": evaluation.breakdown,
                 "breakdown_profile": evaluation.breakdown_profile,
                 "headline": [f"{profile}.{metric}" for metric, profile in sources]},
        "validate": {"strict": strict},
        "inputs": {key: {"path": str(path), "sha256": sha256(path)}
                   for key, path in inputs.items()},
    }
    write_json(output or layout.SETTINGS, record)
    write_json(runs_output or layout.RUN_SET, runs)
    return record, runs


def normalize_qrels(params_path, output, stats) -> dict:
    """Stage ``normalize_qrels``: ``qrels`` (path, format, split, columns) to canonical TSV."""
    from skillret.pipeline.params import load_yaml, qrels_section
    from skillret.pipeline.steps import normalize_qrels as normalize, params_hints

    qrels = qrels_section(load_yaml(params_path).get("qrels"), params_path)
    with params_hints("qrels"):
        return normalize(qrels["path"], output, stats, fmt=qrels["format"],
                         split=qrels["split"], columns=qrels["columns"])


def fuse(params_path, name: str, runs_pattern: str | None, output, notices: list[str]):
    """Stage ``fuse@<name>``: the fused run ``fuse.<name>``, from the registered runs' canonical
    files (``runs_pattern``, ``{}`` standing for a run's name); returns (fusion, names, counts)."""
    from skillret.pipeline import layout
    from skillret.pipeline.fused_runs import fuse_from_params

    return fuse_from_params(params_path, name, output or layout.FUSED_RUN.format(name),
                            run_pattern=runs_pattern or layout.CANONICAL_RUN.format("{}"),
                            notices=notices)


def fusion_inputs(params_path, name: str, output=None, runs_pattern: str | None = None) -> dict:
    """Stage ``fuse_inputs@<name>``: what the fused run ``name`` is made of, as a small file
    that changes only when it does: its settings, those of the fused runs it fuses, and the
    sha256 of every registered run's canonical file it reads (directly or through them).

    ``fuse@<name>`` depends on this file alone, not on every run's: DVC cannot list a params
    list's runs as a stage's dependencies, so this stage (which depends on the folder of every
    run) stands between, and registering or changing another run leaves the fused run alone.
    """
    from skillret.io.atomic import write_json
    from skillret.pipeline import layout
    from skillret.pipeline.fused_runs import fuse_section
    from skillret.pipeline.params import load_yaml
    from skillret.pipeline.steps import sha256

    plans = fuse_section(load_yaml(params_path), str(params_path))
    if name not in plans:
        raise ConfigError(f"{params_path}: no fused run {name!r} under fuse "
                          f"({', '.join(plans) or 'none defined'})")
    pattern = runs_pattern or layout.CANONICAL_RUN.format("{}")
    fused, registered, todo = {}, {}, [name]
    while todo:
        current = todo.pop()
        fusion, inputs = plans[current]
        fused[current] = {"method": fusion.method, "k": fusion.k, "norm": fusion.norm,
                          "weights": dict(sorted(fusion.weights.items())),
                          "depth": fusion.depth, "runs": list(inputs)}
        for run in inputs:
            if run in plans:
                if run not in fused:
                    todo.append(run)
            elif run not in registered:
                path = pattern.replace("{}", run)
                if not Path(path).is_file():
                    raise ConfigError(f"fuse.{name}: run {run!r} has no canonical file {path} "
                                      f"(its score@{run} stage writes it)")
                registered[run] = {"path": path, "sha256": sha256(path)}
    record = {"fused": dict(sorted(fused.items())), "registered": dict(sorted(registered.items()))}
    write_json(output or layout.FUSION_INPUTS.format(name), record)
    return record


def curves(params_path, folder=None, output=None) -> list[dict]:
    """Stage ``curves``: every run's metric-vs-K records in one file."""
    from skillret.pipeline import layout
    from skillret.pipeline.params import load_yaml
    from skillret.pipeline.steps import collect_curves

    return collect_curves(folder or layout.PLOTS_DIR, output or layout.CURVES,
                          stage_runs(load_yaml(params_path)))


def breakdown_plot(params_path, metrics_folder=None, output=None) -> list[dict]:
    """Stage ``breakdown_plot``: every run's breakdown (``eval.breakdown``) as plot records."""
    from skillret.analysis.breakdown import collect_plot
    from skillret.io.atomic import write_json
    from skillret.pipeline import layout
    from skillret.pipeline.params import load_yaml

    runs = stage_runs(load_yaml(params_path))
    folder = Path(metrics_folder or layout.METRICS_DIR)
    records = collect_plot({run: folder / f"{run}.json" for run in runs})
    write_json(output or layout.BREAKDOWN_PLOT, records)
    return records


def compare(params_path, per_query_folder=None, output=None, markdown=None, qrels=None, *,
            metrics_folder=None, headline_path=None):
    """Stage ``compare``: every run against ``compare.baseline``, from the per-query tables;
    then the headline (:mod:`skillret.pipeline.headline`) from the runs' metrics files and the
    verdicts. Writes the comparison (JSON), its report (Markdown, with the tests within strata)
    and the headline, together; returns (comparison, notes, settings, headline, sources)."""
    from skillret.io.atomic import write_json
    from skillret.pipeline import layout
    from skillret.pipeline.headline import check_verdict, headline, headline_sources
    from skillret.pipeline.params import EvalParams, load_yaml

    params = load_yaml(params_path)
    runs = stage_runs(params)
    evaluation = EvalParams.from_mapping(params.get("eval"), params_path)
    sources = headline_sources(evaluation, params_path)
    settings = compare_settings(params.get("compare"), params_path)
    check_verdict(sources, settings["metrics"], params_path)
    folder = Path(per_query_folder or layout.PER_QUERY_DIR)
    tables = {name: folder / f"{name}.tsv" for name in runs}
    strata = stage_strata(params, params_path, qrels or layout.QRELS, settings["metrics"])
    comparison, notes = compare_registered(runs, tables, settings,
                                           output=output or layout.COMPARE,
                                           markdown_path=markdown or layout.COMPARE_REPORT,
                                           strata=strata)
    metrics_folder = Path(metrics_folder or layout.METRICS_DIR)
    table = headline(runs, {run: metrics_folder / f"{run}.json" for run in runs}, sources,
                     comparison.result)
    write_json(headline_path or layout.HEADLINE, table)
    return comparison, notes, settings, table, sources


def compare_settings(section, source: str = "params.yaml") -> dict:
    """The ``compare:`` section of params.yaml, checked, with defaults filled in."""
    from skillret.analysis.compare import DEFAULT_METRICS, DEFAULTS, metric_names

    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise ConfigError(f"{source}: 'compare' must be a mapping")
    unknown = set(section) - set(COMPARE_KEYS)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) under compare: {', '.join(sorted(unknown))}")
    settings = {**DEFAULTS, **{k: v for k, v in section.items() if k != "metrics"}}
    metrics = section.get("metrics") or list(DEFAULT_METRICS)
    if isinstance(metrics, str):
        metrics = [metrics]
    settings["metrics"] = metric_names(metrics)
    return settings


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
    from skillret.analysis.compare import DEFAULTS, compare, read_table_file, write

    metrics = settings["metrics"]
    loaded = {n: read_table_file(tables[n], metrics) for n in runs}
    others = {n: t for n, t in loaded.items() if n != baseline}
    kwargs = {k: settings[k] for k in DEFAULTS}
    comparison, notes = compare((baseline, loaded[baseline]), others, metrics, **kwargs)
    if strata is not None:  # eval.breakdown: the tests within strata (skillret.analysis.breakdown)
        comparison.result["breakdown"] = strata(comparison, **kwargs)
    if markdown_path and "breakdown" in comparison.result:  # the strata's tests, in the report
        from skillret.analysis.breakdown import stratified_table
        from skillret.analysis.compare import markdown as render
        from skillret.io.atomic import write_text

        write(comparison, output)
        table = stratified_table(comparison.result["breakdown"], settings["correction"])
        write_text(markdown_path, render(comparison).rstrip("\n")
                   + "\n\n## Within strata (eval.breakdown)\n\n```\n" + table + "\n```\n")
    else:
        write(comparison, output, markdown_path)
    return comparison, notes


def stage_strata(params: dict, source: str, qrels: str | os.PathLike | None,
                 metrics: Sequence[str]):
    """For the compare stage: ``eval.breakdown``'s facets (``skill_category`` from
    ``data.skills``, any other from ``data.queries``), as a function of a comparison giving
    :func:`stratified_tests`; None when ``eval.breakdown`` is empty."""
    from skillret.analysis.breakdown import plan_needed, stratified_tests
    from skillret.pipeline.params import EvalParams
    from skillret.scoring.names import parse_metric

    facets = EvalParams.from_mapping(params.get("eval"), source).breakdown
    if not facets:
        return None
    if qrels is None:
        raise ConfigError("eval.breakdown: the compare stage needs --qrels for the strata")
    from skillret.io.readers import read_qrels

    data = params.get("data") or {}
    the_plan = plan_needed(facets, data.get("queries"), data.get("skills"))
    loaded_qrels = read_qrels(qrels)
    level = parse_metric(metrics[0]).rel

    def tests(comparison, **settings):
        return stratified_tests(comparison, the_plan, loaded_qrels, level=level, **settings)
    return tests
