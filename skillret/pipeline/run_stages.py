"""The stages `dvc.yaml` runs once per run: `score@<run>`, `score_fused@<name>`, and, for each
fused run of the `fuse` section, `fuse_inputs@<name>` and `fuse@<name>`.

A run is validated and scored in one pass; every output is written last and together. A fused
run's runs are registered or fused runs; everything is checked before anything is read.
`write_scores` also serves `skillret-eval score`, and `fuse_to_file` `skillret-eval fuse`.
"""

from __future__ import annotations

import contextlib
import graphlib
import os
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from skillret import __version__
from skillret.analysis.breakdown import add_coverage, breakdown, check_coverage, load_needed_facets
from skillret.analysis.fusion import Fusion, run_names, write_fusion
from skillret.errors import ConfigError, InputError
from skillret.io.atomic import OutputSet, atomic_path, write_json
from skillret.io.hashing import sha256
from skillret.io.per_query import write_table
from skillret.io.readers import RunSource, open_run, read_qrels, run_name
from skillret.io.write_runs import run_format
from skillret.measures import registry
from skillret.pipeline import layout
from skillret.pipeline.comparable import contract, count_of, counts
from skillret.pipeline.params import (check_name, keyed, load_yaml, mapping, run_entry,
                                      stage_params, stage_runs)
from skillret.scoring.aggregate import aggregate
from skillret.scoring.evaluator import Evaluator
from skillret.scoring.profiles import Profile, profile_cutoffs
from skillret.validation.checks import validate_and_score

TIE_RULE = ("score descending, compared as 32-bit floats (trec_eval keeps scores in a C float); "
            "equal scores broken by skill id, descending in byte order; rank columns ignored")


def curve_profile(base: Profile) -> Profile:
    """Every plotted measure at K = 1 .. `base`'s depth, over `base`'s query set and level."""
    return Profile("curve", tuple(f"{m}@{k}" for k in range(1, base.depth + 1)
                                  for m in registry.names("plotted")),
                   query_set=base.query_set, relevance_level=base.relevance_level,
                   rounding=base.rounding)


def write_scores(scores, *, metrics=None, per_query=None, plots=None, curve=None, facets=None,
                 breakdown_profile=None, about: dict | None = None) -> None:
    """Write each file asked for: the metrics (with breakdown and `about`), per-query values, and
    plot records (of the `curve_profile`)."""
    output = {**scores.to_dict(), **(about or {})}
    if facets is not None and facets.facets:
        output["breakdown"] = breakdown(scores, facets, breakdown_profile)
    if metrics is not None:
        write_json(metrics, output)
    if per_query is not None:
        write_table(per_query, scores.per_query_columns())
    if plots is not None:
        values, plotted = aggregate(curve, scores.results, scores.qrels), registry.names("plotted")
        write_json(plots, [{"k": k, **{m: values[f"{m}@{k}"] for m in plotted}}
                           for k in range(1, curve.depth + 1)])


def score(name: str, *, fused: bool = False) -> None:
    """Stage `score@<name>` (`score_fused@<name>` when `fused`)."""
    check_name(name, "fused run" if fused else "run")   # before anything: it makes paths
    params, _, evaluation, sources, strict = stage_params(layout.PARAMS)
    data = params.get("data") or {}
    facets = load_needed_facets(evaluation.breakdown, data.get("queries"), data.get("skills"))
    run_file, options = (layout.FUSED_RUN.format(name), {}) if fused \
        else run_entry(params, name, layout.PARAMS)
    outputs = {key: pattern.format(name)  # a fused run's canonical copy sits beside its TREC
               for key, pattern in (layout.FUSED_OUTPUTS if fused else layout.RUN_OUTPUTS).items()}
    resolved = evaluation.resolved()
    base = next(p for p in resolved if p.name == evaluation.plot_profile)
    curve = curve_profile(base)
    by = next((p for p in resolved if p.name == evaluation.breakdown_profile), resolved[0])
    with OutputSet() as out:
        for path in outputs.values():          # every place checked before any work
            out.path(path)
        qrels = read_qrels(layout.QRELS)
        evaluator = Evaluator(qrels, resolved, extra_metrics=curve.parsed())
        coverage = check_coverage(facets, qrels, by.relevance_level, strict=strict) \
            if facets.facets_file is not None or facets.skills is not None else None
        try:
            report, results = validate_and_score(
                qrels, open_run(run_file, **options),
                metrics=evaluator.metrics, depth=max(p.depth for p in resolved), strict=strict,
                normalized=outputs["normalized"], judged_at=profile_cutoffs(resolved))
        except InputError as error:
            raise error.shown_with(section=f"run_options.{name}") from None
        if coverage:
            add_coverage(report, coverage)
        scores = evaluator.scores(results, run_file)
        report["contract"] = {  # what the numbers mean
            "skillret_eval": __version__, "profiles": {p.name: p.describe() for p in resolved},
            "plot_profile": base.name, "tie_rule": TIE_RULE,
            **{key: {"path": Path(file).as_posix(), "sha256": sha256(file)}
               for key, file in (("qrels", layout.QRELS), ("run", run_file))}}
        about = {"judgments": {"sha256": sha256(layout.QRELS),  # the qrels scored against
                               **counts(qrels, evaluation.relevance_level or 1)},
                 "contract": contract(resolved), "judged": report.get("judged") or {}}
        write_scores(scores, metrics=outputs["metrics"], per_query=outputs["per_query"],
                     plots=outputs["plots"], curve=curve, facets=facets,
                     breakdown_profile=evaluation.breakdown_profile, about=about)
        write_json(outputs["report"], report)
    values = scores.to_dict()
    shown = ", ".join(f"{metric} {values[profile][metric]:.5f} ({profile})"
                      for metric, profile in sources)
    queries, warnings = values["queries"], report["warnings"]
    print(f"{name}: {shown}; {queries['in_both']} of {queries['judged']} judged queries "
          f"answered" + (f"; {count_of(len(warnings), 'warning')} ({outputs['report']})"
                         if warnings else ""))


FUSE_KEYS = ("method", "runs", "k", "norm", "weights", "depth")


def fuse_to_file(runs, output: str | os.PathLike, fusion: Fusion, *, tag: str | None = None,
                 notices: list[str] | None = None, atomic: bool = True) -> dict:
    """Fuse `runs` (`{name: path | RunSource}` or a list of paths) into `output` (format by
    extension); returns counts. `atomic=False` writes in place (an intermediate read at once)."""
    names, paths = run_names(runs)  # the weights: checked by the fuse section and the CLI
    run_format(output)
    for path in paths:  # a RunSource is open already
        if not isinstance(path, RunSource) and not os.path.exists(path):
            raise InputError(path, "no such run file")
    with (atomic_path(output) if atomic else contextlib.nullcontext(output)) as tmp:
        sources = {name: path if isinstance(path, RunSource) else open_run(path)
                   for name, path in zip(names, paths)}
        return write_fusion(fusion, sources, output, tmp, tag=tag or run_name(output),
                            notices=notices)


def fuse_section(params: dict, source: str) -> dict[str, tuple[Fusion, list[str]]]:
    """The checked `fuse` section: `{name: (Fusion, [run names])}`, each after its inputs."""
    stage_runs(params, source)
    registered, section = params.get("runs") or {}, params.get("fuse") or {}
    plans, order = {}, graphlib.TopologicalSorter()
    for name, spec in section.items():
        where = f"{source}: fuse.{name}"
        if name in registered:
            raise ConfigError(f"{where}: {name!r} is already a registered run (runs.{name}); "
                              "give the fused run another name")
        spec = mapping(spec, f"fuse.{name}", source, FUSE_KEYS)
        runs = spec.get("runs")
        if (not isinstance(runs, list) or len(runs) < 2
                or not all(isinstance(r, str) for r in runs)):
            raise ConfigError(f"{where}: runs must list at least two run names")
        if len(set(runs)) != len(runs):
            raise ConfigError(f"{where}: a run is listed twice in runs")
        for run in runs:
            if run not in registered and run not in section:
                raise ConfigError(f"{where}: unknown run {run!r} (registered: "
                                  f"{', '.join(registered) or 'none'}; fused: "
                                  f"{', '.join(section)})")
            if not isinstance(registered.get(run, ""), str):
                raise ConfigError(f"{source}: runs.{run} must be a file path (options such as "
                                  f"the format go under run_options.{run})")
        weights = mapping(spec.get("weights"), f"fuse.{name}.weights", source)
        fusion = keyed(where, Fusion, weights=weights, **{
            key: spec[key] for key in ("method", "k", "norm", "depth") if key in spec})
        keyed(where, fusion.weight_vector, runs)
        plans[name] = (fusion, runs)
        order.add(name)  # `name` first: a cycle is named in the order the runs are read
        for run in (run for run in runs if run in section):
            order.add(run, name)
    try:
        ordered = list(order.static_order())
    except graphlib.CycleError as exc:
        raise ConfigError(f"{source}: a cycle of fused runs: {' -> '.join(exc.args[1])}") \
            from None
    return {name: plans[name] for name in reversed(ordered)}


def _plans(path, name: str) -> tuple[dict, dict, list[str]]:
    """The params, the checked `fuse` section, and fused run `name` with the fused runs it
    reads (directly or not), each after its inputs."""
    params = load_yaml(path)
    plans = fuse_section(params, os.fspath(path))
    if name not in plans:
        raise ConfigError(f"{os.fspath(path)}: no fused run {name!r} under fuse "
                          f"({', '.join(plans) or 'none defined'})")
    needed = {name}
    for run in reversed(plans):  # the runs a needed run reads come before it
        if run in needed:
            needed.update(plans[run][1])
    return params, plans, [run for run in plans if run in needed]


def fuse_from_params(path: str | os.PathLike, name: str, output: str | os.PathLike, *,
                     run_pattern: str | None = None, notices: list[str] | None = None):
    """Write fused run `name` of a params file to `output`; returns (fusion, run names, counts).
    Registered runs are read from `run_pattern` (`{}`: the name), else `runs:`; fused inputs are
    made in a temporary folder first."""
    params, plans, chain = _plans(path, name)
    files = {run: run_pattern.replace("{}", run) if run_pattern else entry
             for run, entry in (params.get("runs") or {}).items()}
    with tempfile.TemporaryDirectory(prefix="skillret-fuse-") as tmp:
        for run in chain:   # inputs first; an intermediate is written in place, read at once
            files[run] = output if run == name else Path(tmp) / f"{run}.parquet"
            fusion, inputs = plans[run]
            counts = fuse_to_file({r: files[r] for r in inputs}, files[run], fusion, tag=run,
                                  notices=notices, atomic=run == name)
    return plans[name][0], plans[name][1], counts


def fuse_stage(name: str) -> None:
    """Stage `fuse@<name>`: the fused run, written as TREC; its registered runs read from their
    canonical files."""
    notices: list[str] = []
    fuse_from_params(layout.PARAMS, name, layout.FUSED_RUN.format(name),
                     run_pattern=layout.CANONICAL_RUN, notices=notices)
    for notice in notices:  # the fused run's line is score_fused@<name>'s
        print(f"fuse@{name}: note: {notice}", file=sys.stderr)


def fusion_inputs_stage(name: str) -> None:
    """Stage `fuse_inputs@<name>`: the fused run's settings (and its fused inputs') and the sha256
    of each registered run it reads. DVC cannot take a params list as a stage's deps, so
    `fuse@<name>` depends on this file instead."""
    _, plans, chain = _plans(layout.PARAMS, check_name(name, "fused run"))
    fused, registered = {}, {}
    for current in chain:
        fusion, inputs = plans[current]
        fused[current] = {**asdict(fusion), "weights": dict(sorted(fusion.weights.items())),
                          "runs": list(inputs)}
        for run in inputs:
            if run not in plans and run not in registered:
                path = layout.CANONICAL_RUN.format(run)
                if not Path(path).is_file():
                    raise ConfigError(f"fuse.{name}: run {run!r} has no canonical file {path} "
                                      f"(its score@{run} stage writes it)")
                registered[run] = {"path": path, "sha256": sha256(path)}
    write_json(layout.FUSION_INPUTS.format(name), {"fused": dict(sorted(fused.items())),
                                                   "registered": dict(sorted(registered.items()))})
