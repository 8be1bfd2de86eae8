"""`skillret-eval score` and `validate`: one run against the qrels, scored or checked."""

from __future__ import annotations

from skillret.analysis.breakdown import (BUILTIN_FACETS, add_coverage, breakdown, check_coverage,
                                         coverage_warnings, load_facets, pick_profile)
from skillret.cli.guard import tell
from skillret.errors import ConfigError, ValidationFailed
from skillret.io.atomic import reserve, write_json
from skillret.io.readers import open_run, parse_columns, read_qrels
from skillret.pipeline.params import EvalParams, load_yaml, validate_section
from skillret.pipeline.run_stages import write_scores
from skillret.render.tables import breakdown_tables, scores_table
from skillret.scoring.evaluator import Evaluator
from skillret.scoring.profiles import metric_profiles, profile_cutoffs, resolve_profiles
from skillret.validation.checks import validate_and_score


def _run(args, with_rank: bool = False):
    """The run, its reading begun so that it overlaps the qrels' reading."""
    return open_run(args.run, fmt=args.run_format, split=args.split,
                    columns=parse_columns(args.columns)).read_ahead(with_rank=with_rank)


def _qrels(args):
    return read_qrels(args.qrels, fmt=args.qrels_format, split=args.split,
                      columns=parse_columns(args.qrels_columns))


def _params(args):
    """`--params` (empty without it) and its `eval` section (the defaults without it)."""
    params = load_yaml(args.params) if args.params else {}
    return params, EvalParams.from_mapping(params.get("eval"), args.params or "params.yaml")


def _profiles(args, params: EvalParams):
    """The profiles of `--profile` and `--metric` (else `eval.profiles` of `--params`, else
    official), at `--relevance-level` (else the params')."""
    names = getattr(args, "profile", None) or (params.profiles if args.params else ["official"])
    level = args.relevance_level if args.relevance_level is not None else params.relevance_level
    if getattr(args, "metric", None):  # alone, or beside --profile
        names = [*(args.profile or []),
                 *metric_profiles(args.metric, query_set=args.query_set, relevance_level=level)]
    return resolve_profiles(names, define=params.define, relevance_level=level)


def score(args) -> int:
    reserve(args.output, args.per_query)
    with _run(args) as run:
        params, evaluation = _params(args)
        resolved = _profiles(args, evaluation)
        facets, by = _requested(args, params.get("data") or {}, evaluation)
        by = by if by in [p.name for p in resolved] else None
        scores = Evaluator(_qrels(args), resolved).evaluate(run)
    write_scores(scores, metrics=args.output, per_query=args.per_query, facets=facets,
                 breakdown_profile=by)
    tell("note", scores.notices)
    tell("warning", scores.warnings)
    if facets is not None:
        profile = pick_profile(scores, by)
        tell("warning", coverage_warnings(check_coverage(facets, scores.qrels,
                                                         profile.relevance_level)))
    if not args.quiet:
        print(scores_table(scores))
        if facets is not None:
            print("\n" + breakdown_tables(breakdown(scores, facets, by), profile,
                                           scores.query_counts["evaluated"][profile.name]))
    return 0


def _requested(args, data: dict, params: EvalParams):
    """`(facets, their profile)`: from `--breakdown`, else `eval.breakdown` of `--params` (as the
    pipeline does); files from `--facets`/`--skills`, else `data.*` of the params. `(None, None)`
    when no breakdown is asked for."""
    facets, profile = ((args.breakdown, None) if args.breakdown
                       else (params.breakdown, params.breakdown_profile))
    if not facets:
        return None, None
    custom = any(f not in BUILTIN_FACETS for f in facets)
    return load_facets(facets, args.facets or (data.get("queries") if custom else None),
                       args.skills or (data.get("skills") if "skill_category" in facets
                                       else None)), profile


def validate(args) -> int:
    reserve(args.report, args.normalized)
    params, evaluation = _params(args)
    strict = args.strict or (validate_section(params, args.params) if args.params else False)
    depth, cutoffs = args.depth, None
    if depth is None:
        cutoffs = profile_cutoffs(_profiles(args, evaluation))
        depth = cutoffs[-1]
    if depth < 1:
        raise ConfigError("--depth must be at least 1")
    with _run(args, with_rank=True) as run:
        qrels = _qrels(args)
        counts = None
        if args.facets or args.skills:  # count what a breakdown would put under (missing)
            counts = check_coverage(load_facets([], args.facets, args.skills), qrels,
                                    args.relevance_level or 1, strict=strict)
        try:
            report, _ = validate_and_score(qrels, run, depth=depth, strict=strict,
                                           normalized=args.normalized, judged_at=cutoffs)
        except ValidationFailed as exc:
            tell("warning", (exc.report or {}).get("warnings", []))
            raise
    if counts:
        add_coverage(report, counts)
    if args.report is not None:
        write_json(args.report, report)
    tell("note", report["notices"])
    tell("warning", report["warnings"])
    q, r = report["queries"], report["results"]
    print(f"{report['run']}: {report['status']}: {q['in_run']} queries in the run, "
          f"{q['in_qrels']} judged, {q['in_both']} in both; {r['rows']} results "
          f"({r['min']}-{r['max']} per query); {len(report['warnings'])} warning(s)")
    return 0
