"""The stages `dvc.yaml` runs once per run: `score@<run>` and `score_fused@<name>`.

A run is validated and scored in one pass; every output is written last and together.
`write_scores` also serves `skillret-eval score`.
"""

from __future__ import annotations

from pathlib import Path

from skillret import __version__
from skillret.analysis.breakdown import add_coverage, breakdown, check_coverage, load_needed_facets
from skillret.errors import InputError
from skillret.io.atomic import OutputSet, write_json
from skillret.io.hashing import sha256
from skillret.io.per_query import write_table
from skillret.io.readers import open_run, read_qrels
from skillret.measures import registry
from skillret.pipeline import layout
from skillret.pipeline.comparable import contract, count_of, fingerprint
from skillret.pipeline.params import check_name, run_entry, stage_params
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


def write_scores(scores, *, metrics=None, per_query=None, plots=None, base=None, curve=None,
                 facets=None, breakdown_profile=None, about: dict | None = None) -> None:
    """Write each file asked for: the metrics (with breakdown and `about`), per-query values, and
    plot records."""
    output = {**scores.to_dict(), **(about or {})}
    if facets is not None and facets.facets:
        output["breakdown"] = breakdown(scores, facets, breakdown_profile)
    if metrics is not None:
        write_json(metrics, output)
    if per_query is not None:
        write_table(per_query, scores.per_query_columns())
    if plots is not None:
        values = aggregate(curve, scores.results, scores.qrels)
        plotted = dict.fromkeys(m.measure for m in curve.parsed())
        write_json(plots, [{"k": k, **{m: values[f"{m}@{k}"] for m in plotted}}
                           for k in range(1, base.depth + 1)])


def score(name: str, *, fused: bool = False, params_path: str = layout.PARAMS) -> None:
    """Stage `score@<name>` (`score_fused@<name>` when `fused`)."""
    check_name(name, "fused run" if fused else "run")   # before anything: it makes paths
    params, _, evaluation, sources, strict = stage_params(params_path)
    data = params.get("data") or {}
    facets = load_needed_facets(evaluation.breakdown, data.get("queries"), data.get("skills"))
    run_file, options = (layout.FUSED_RUN.format(name), {}) if fused \
        else run_entry(params, name, params_path)
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
        counts = check_coverage(facets, qrels, by.relevance_level, strict=strict) \
            if facets.facets_file is not None or facets.skills is not None else None
        try:
            report, results = validate_and_score(
                qrels, open_run(run_file, **options),
                metrics=evaluator.metrics, depth=max(p.depth for p in resolved), strict=strict,
                normalized=outputs["normalized"], judged_at=profile_cutoffs(resolved))
        except InputError as error:
            raise error.shown_with(section=f"run_options.{name}") from None
        if counts:
            add_coverage(report, counts)
        scores = evaluator.scores(results, run_file)
        report["contract"] = {  # what the numbers mean
            "skillret_eval": __version__, "profiles": {p.name: p.describe() for p in resolved},
            "plot_profile": base.name, "tie_rule": TIE_RULE,
            **{key: {"path": Path(file).as_posix(), "sha256": sha256(file)}
               for key, file in (("qrels", layout.QRELS), ("run", run_file))}}
        about = {"judgments": fingerprint(qrels, layout.QRELS, evaluation.relevance_level or 1),
                 "contract": contract(resolved), "judged": report.get("judged") or {}}
        write_scores(scores, metrics=outputs["metrics"], per_query=outputs["per_query"],
                     plots=outputs["plots"], base=base, curve=curve, facets=facets,
                     breakdown_profile=evaluation.breakdown_profile, about=about)
        write_json(outputs["report"], report)
    values = scores.to_dict()
    shown = ", ".join(f"{metric} {values[profile][metric]:.5f} ({profile})"
                      for metric, profile in sources)
    queries, warnings = values["queries"], report["warnings"]
    print(f"{name}: {shown}; {queries['in_both']} of {queries['judged']} judged queries "
          f"answered" + (f"; {count_of(len(warnings), 'warning')} ({outputs['report']})"
                         if warnings else ""))

