"""The file-producing steps the pipeline stages and the CLI commands share: read, compute, write;
and the stages that run one of them on one input, ``normalize_qrels`` and ``score@<run>``.

Each step loads its inputs (:func:`~skillret.io.readers.read_qrels`,
:func:`~skillret.io.readers.open_run`: paths or loaded objects), hands them to the core, computes
everything first and writes its outputs last, each one atomically, so a step that fails leaves
the previous outputs as they were. A CLI command parses its options and calls one of these; a
stage's entry point (:mod:`skillret.cli.stages`) calls its stage function, which reads the
``params.yaml`` keys the stage lists. The stages over every run (curves, compare,
breakdown_plot) are in :mod:`skillret.pipeline.stages`, ``fuse@<name>`` is
:func:`skillret.pipeline.fused_runs.fuse_from_params`, ``inputs`` (the input files exist) is
:func:`skillret.pipeline.inputs.inputs_stage`: a stage sits beside the steps it runs, so
the pipeline is one level above the computation.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from skillret import __version__
from skillret.io.hashing import sha256
from skillret.io.write_tables import write_json, write_per_query, write_qrels

TIE_RULE = ("score descending, compared as 32-bit floats (trec_eval keeps scores in a C float); "
            "equal scores broken by skill id, descending in byte order; rank columns ignored")


@contextlib.contextmanager
def params_hints(section: str):
    """Rewrite an error's CLI hint (``--columns query=NAME``) into the params key that does
    the same in the pipeline (``run_options.<run>.columns: query=NAME``)."""
    from skillret.errors import InputError

    try:
        yield
    except InputError as exc:
        hint = exc.hint or ""
        for flag in ("--qrels-columns", "--columns", "--qrels-format", "--format", "--split"):
            key = flag.rpartition("-")[2]
            hint = hint.replace(f"pass {flag} ", f"set {section}.{key}: ")
            hint = hint.replace(f"with {flag}", f"with {section}.{key}")
            hint = hint.replace(f"pass {flag}", f"set {section}.{key}")
        if hint != (exc.hint or ""):
            exc.hint = hint + " in params.yaml"
            exc.args = (exc.message,)
        raise


def resolve(profiles, *, define: dict | None = None, relevance_level: int | None = None):
    """Profile names (or Profile objects) -> Profiles, user definitions and level applied."""
    from skillret.scoring.profiles import as_profiles

    return as_profiles(profiles, define=define, relevance_level=relevance_level)


def largest_cutoff(profiles) -> int:
    """The depth a ranking should reach: the largest cutoff of the profiles scored."""
    return max(p.depth for p in profiles)


def normalize_qrels(qrels: str | os.PathLike, output: str | os.PathLike,
                    stats: str | os.PathLike | None = None, *, fmt: str | None = None,
                    split: str | None = None, columns: dict | None = None) -> dict:
    """Judgments in any format -> canonical TSV (query_id, skill_id, relevance); its stats."""
    from skillret.io.readers import read_qrels

    judgments = read_qrels(qrels, fmt=fmt, split=split, columns=columns)
    summary = judgments.stats()
    write_qrels(output, judgments)
    if stats is not None:
        write_json(stats, summary)
    return summary


def report_counts(report: dict) -> dict:
    """The numeric part of a validation report: what ``dvc metrics diff`` should compare."""
    return {
        "queries": report["queries"],
        "results": report["results"],
        "ties": report["ties"],
        "rank_disagreements": report["rank_column"]["disagreeing_rows"],
        "extra_fields": report["extra_fields"],
        "qrels_duplicates_dropped": report["qrels_duplicates_dropped"],
        "cross_check_differences": (report["cross_check"] or {}).get("differ", 0),
        "warnings": len(report["warnings"]),
    }


def validate_run(qrels, run, *, normalized: str | os.PathLike | None = None,
                 report: str | os.PathLike | None = None,
                 counts: str | os.PathLike | None = None, depth: int = 15,
                 strict: bool = False, fmt: str | None = None, split: str | None = None,
                 columns: dict | None = None, facets=None, relevance_level: int = 1) -> dict:
    """Validate a run; write the canonical run, the full report and its counts (if asked).

    ``facets`` (a :class:`skillret.analysis.breakdown.Facets`): the report also counts the judged
    queries its facets file lacks and the relevant skills its skills file lacks (a breakdown puts
    them under ``(missing)``), as warnings; under ``strict`` they fail before anything is written.
    """
    result, _ = _validated(qrels, run, normalized=normalized, depth=depth, strict=strict,
                           fmt=fmt, split=split, columns=columns, facets=facets,
                           relevance_level=relevance_level)
    if report is not None:
        write_json(report, result)
    if counts is not None:
        write_json(counts, report_counts(result))
    return result


def _validated(qrels, run, *, metrics=(), normalized=None, depth: int = 15,
               strict: bool = False, fmt=None, split=None, columns=None, facets=None,
               relevance_level: int = 1):
    """:func:`validate_run`'s report, unwritten, and the per-query values of ``metrics`` from
    the same pass (:func:`~skillret.validation.checks.validate_and_score`; None without)."""
    from skillret.io.readers import open_run, read_qrels
    from skillret.validation.checks import validate_and_score

    qrels = read_qrels(qrels)
    facet_counts = None
    if facets is not None:
        from skillret.analysis.breakdown import check_coverage
        facet_counts = check_coverage(facets, qrels, relevance_level, strict=strict)
    result, scored = validate_and_score(qrels, open_run(run, fmt=fmt, split=split,
                                                        columns=columns),
                                        metrics=metrics, depth=depth, strict=strict,
                                        normalized=normalized)
    if facet_counts:
        from skillret.analysis.breakdown import add_coverage
        add_coverage(result, facet_counts)
    return result, scored


def curve_profile(base):
    """Every registered measure at K = 1 .. ``base``'s depth, over ``base``'s queries and level."""
    from skillret.measures.registry import names
    from skillret.scoring.profiles import Profile

    depth = base.depth
    return Profile("curve", tuple(f"{m}@{k}" for k in range(1, depth + 1) for m in names()),
                   query_set=base.query_set, relevance_level=base.relevance_level,
                   rounding=base.rounding)


def score_run(qrels, run, *, profiles, relevance_level: int | None = None,
              define: dict | None = None, plot_profile: str | None = None,
              metrics: str | os.PathLike | None = None,
              per_query: str | os.PathLike | None = None,
              plots: str | os.PathLike | None = None,
              contract: str | os.PathLike | None = None, contract_run: str | None = None,
              contract_qrels: str | None = None, breakdown=None,
              breakdown_profile: str | None = None):
    """Score a run under ``profiles``; write metrics, per-query values, plot data, contract.

    ``qrels`` and ``run`` are what :func:`skillret.score` accepts (paths, loaded objects).
    Plot data is a list of records ``{"k": K, "NDCG": ..., "Recall": ..., ...}`` for K = 1 up to
    the depth of ``plot_profile`` (default: the first profile), over that profile's query set and
    relevance level, rounded as it rounds. The contract records what the numbers mean and the
    sha256 of both input files: ``qrels`` and ``run`` when they are paths, else
    ``contract_qrels`` and ``contract_run`` (which also names the run file when ``run`` is its
    canonical copy). ``breakdown`` (a :class:`skillret.analysis.breakdown.Facets`) adds, under the
    metrics' key ``breakdown``, the metrics of ``breakdown_profile`` (default: the first profile)
    per stratum of each of its facets.
    """
    from skillret.io.readers import open_run, read_qrels
    from skillret.scoring.evaluator import Evaluator

    resolved, base, curve = _plan(profiles, define, relevance_level, plot_profile, plots,
                                  breakdown, breakdown_profile)
    evaluator = Evaluator(read_qrels(qrels), resolved,
                          extra_metrics=curve.parsed() if curve else ())
    scores = evaluator.evaluate(open_run(run))
    _write_scores(scores, base, curve, metrics=metrics, per_query=per_query, plots=plots,
                  breakdown=breakdown, breakdown_profile=breakdown_profile)
    if contract is not None:
        write_json(contract, metric_contract(resolved, base, contract_run or run,
                                             contract_qrels or qrels))
    return scores


def _plan(profiles, define, relevance_level, plot_profile, plots, breakdown,
          breakdown_profile):
    """The profiles resolved, the plot profile and the curve profile (None without ``plots``),
    every name checked before anything is read."""
    from skillret.errors import ConfigError

    resolved = resolve(profiles, define=define, relevance_level=relevance_level)
    base = next((p for p in resolved if p.name == (plot_profile or resolved[0].name)), None)
    if base is None:
        raise ConfigError(f"plot profile {plot_profile!r} is not among the profiles scored "
                          f"({', '.join(p.name for p in resolved)})")
    by_stratum = breakdown is not None and bool(breakdown.facets)
    if by_stratum and breakdown_profile is not None and \
            breakdown_profile not in {p.name for p in resolved}:
        raise ConfigError(f"breakdown profile {breakdown_profile!r} is not among the profiles "
                          f"scored ({', '.join(p.name for p in resolved)})")
    return resolved, base, (curve_profile(base) if plots is not None else None)


def _write_scores(scores, base, curve, *, metrics, per_query, plots, breakdown,
                  breakdown_profile) -> None:
    """:func:`score_run`'s outputs but the contract (each one asked for) from computed
    ``scores``."""
    from skillret.scoring.aggregate import aggregate

    output = scores.to_dict()
    if breakdown is not None and breakdown.facets:
        from skillret.analysis.breakdown import breakdown as by_facet
        output["breakdown"] = by_facet(scores, breakdown, breakdown_profile)
    if metrics is not None:
        write_json(metrics, output)
    if per_query is not None:
        write_per_query(per_query, scores.per_query_columns())
    if curve is not None:
        values = aggregate(curve, scores.results, scores.qrels)
        plotted = dict.fromkeys(m.measure for m in curve.parsed())
        write_json(plots, [{"k": k, **{m: values[f"{m}@{k}"] for m in plotted}}
                           for k in range(1, base.depth + 1)])


def metric_contract(resolved, base, run_file, qrels_file) -> dict:
    """What the numbers mean: the package version, every profile's definition, the plot
    profile, the tie rule, and the sha256 of the qrels and the run scored."""
    return {
        "skillret_eval": __version__,
        "profiles": {p.name: p.describe() for p in resolved},
        "plot_profile": base.name,
        "tie_rule": TIE_RULE,
        "qrels": {"path": Path(qrels_file).as_posix(), "sha256": sha256(qrels_file)},
        "run": {"path": Path(run_file).as_posix(), "sha256": sha256(run_file)},
    }


def evaluate_registered_run(qrels: str | os.PathLike, entry, *, outputs: dict, eval_params,
                            strict: bool = False, facets=None):
    """The pipeline's per-run step: validate a registered run and score it as its canonical
    copy orders it, in one pass over the file (the values are those of scoring the canonical
    file: :func:`~skillret.validation.checks.validate_and_score`).

    ``entry`` is a :class:`~skillret.pipeline.params.RunEntry`; ``outputs`` maps ``normalized``,
    ``report``, ``metrics``, ``per_query``, ``plots`` and (optionally) ``counts`` and
    ``contract`` to paths. The validation report carries the metric contract
    (:func:`metric_contract`) under ``contract``; ``outputs["contract"]`` writes it alone too.
    (One file fewer per run: every output is four lines of ``dvc.lock``, which DVC parses and
    rewrites after every stage.)
    One process does both (a stage costs a process and DVC's lock handling). Every output is
    computed before the first is replaced: a run that fails validation or scoring leaves all of
    them as they were. ``facets`` (a :class:`skillret.analysis.breakdown.Facets` for
    ``eval.breakdown``): validation counts what it cannot place, the metrics carry the breakdown.
    """
    from skillret.io.atomic import OutputSet
    from skillret.io.readers import read_qrels
    from skillret.scoring.evaluator import Evaluator

    resolved, base, curve = _plan(eval_params.profiles, eval_params.define,
                                  eval_params.relevance_level, eval_params.plot_profile,
                                  outputs["plots"], facets, eval_params.breakdown_profile)
    by = next((p for p in resolved if p.name == eval_params.breakdown_profile), resolved[0])
    with params_hints(f"run_options.{entry.name}"), OutputSet() as out:
        for path in outputs.values():  # every place checked before any work
            out.path(path)
        loaded = read_qrels(qrels)  # read once: validation and scoring share it
        evaluator = Evaluator(loaded, resolved, extra_metrics=curve.parsed() if curve else ())
        # one pass: each chunk is validated, put in the canonical order and scored in it
        report, results = _validated(loaded, entry.path, metrics=evaluator.metrics,
                                     normalized=outputs["normalized"],
                                     depth=largest_cutoff(resolved), strict=strict,
                                     fmt=entry.fmt, split=entry.split, columns=entry.columns,
                                     facets=facets, relevance_level=by.relevance_level)
        scores = evaluator.scores(results, entry.path)
        report["contract"] = metric_contract(resolved, base, entry.path, qrels)
        _write_scores(scores, base, curve, metrics=outputs["metrics"],
                      per_query=outputs["per_query"], plots=outputs["plots"], breakdown=facets,
                      breakdown_profile=eval_params.breakdown_profile)
        if outputs.get("contract"):
            write_json(outputs["contract"], report["contract"])
        write_json(outputs["report"], report)
        if outputs.get("counts"):
            write_json(outputs["counts"], report_counts(report))
    return report, scores


def score_stage(params_path, run_name: str, run_file, qrels, outputs: dict | None = None, *,
          fused: bool = False):
    """Stage ``score@<run>``: validate the run (``runs.<run>``, or for a fused run
    ``run_file``, default its TREC file), then score it; returns (entry, validation report,
    scores, headline sources). ``outputs`` default to the run's paths in
    :mod:`skillret.pipeline.layout`."""
    from skillret.analysis.breakdown import load_needed_facets
    from skillret.pipeline import layout
    from skillret.pipeline.headline import headline_sources
    from skillret.pipeline.params import (EvalParams, RunEntry, check_name, load_yaml,
                                          run_entry, validate_section)

    check_name(run_name, "fused run" if fused else "run")  # before anything: it makes paths
    params = load_yaml(params_path)  # every section checked before any work
    evaluation = EvalParams.from_mapping(params.get("eval"), params_path)
    sources = headline_sources(evaluation, params_path)
    strict = validate_section(params.get("validate"), params_path)["strict"]
    data = params.get("data") or {}
    facets = load_needed_facets(evaluation.breakdown, data.get("queries"), data.get("skills"))
    if fused:
        run_file = run_file or layout.FUSED_RUN.format(run_name)
    entry = (RunEntry(run_name, run_file) if run_file
             else run_entry(params, run_name, params_path))
    outputs = {**layout.run_outputs(run_name, fused=fused), **(outputs or {})}
    report, scores = evaluate_registered_run(qrels or layout.QRELS, entry, outputs=outputs,
                                             eval_params=evaluation, strict=strict,
                                             facets=facets)
    return entry, report, scores, sources


def normalize_qrels_stage(params_path, output, stats) -> dict:
    """Stage ``normalize_qrels``: ``qrels`` (path, format, split, columns) to canonical TSV."""
    from skillret.pipeline.params import load_yaml, qrels_section

    qrels = qrels_section(load_yaml(params_path).get("qrels"), params_path)
    with params_hints("qrels"):
        return normalize_qrels(qrels["path"], output, stats, fmt=qrels["format"],
                         split=qrels["split"], columns=qrels["columns"])
