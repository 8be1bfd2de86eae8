"""`skillret-eval score`: a run's metrics under one or more profiles, printed and written."""

from __future__ import annotations

from skillret.analysis.breakdown import (BUILTIN_FACETS, breakdown, coverage, coverage_warnings,
                                         load_facets, pick_profile)
from skillret.cli.options import profiles_from, qrels_from, run_from, tell
from skillret.io.atomic import reserve
from skillret.pipeline.params import eval_params, load_yaml
from skillret.pipeline.run_stages import write_scores
from skillret.render.tables import breakdown_tables, scores_table
from skillret.scoring.evaluator import Evaluator
from skillret.scoring.profiles import metric_profiles, resolve_profiles


def command(args) -> int:
    reserve(args.output, args.per_query)
    with run_from(args) as run:
        names, level, define = profiles_from(args)
        if args.metric:  # alone, or beside --profile
            names = [*(args.profile or []),
                     *metric_profiles(args.metric, query_set=args.query_set,
                                      relevance_level=level)]
        facets, by = _requested(args.breakdown, args.facets, args.skills, args.params)
        by = by if by in names else None
        resolved = resolve_profiles(names, define=define, relevance_level=level)
        scores = Evaluator(qrels_from(args), resolved).evaluate(run)
    write_scores(scores, metrics=args.output, per_query=args.per_query, facets=facets,
                 breakdown_profile=by)
    tell("note", scores.notices)
    tell("warning", scores.warnings)
    if facets is not None:
        profile = pick_profile(scores, by)
        tell("warning", coverage_warnings(coverage(facets, scores.qrels,
                                                   profile.relevance_level)))
    if not args.quiet:
        print(scores_table(scores))
        if facets is not None:
            print("\n" + breakdown_tables(breakdown(scores, facets, profile), profile,
                                           scores.query_counts["evaluated"][profile.name]))
    return 0


def _requested(facets, facets_file, skills, params):
    """`(facets, their profile)`: from `--breakdown`, else `eval.breakdown` of `--params` (as the
    pipeline does); files from `--facets`/`--skills`, else `data.*` of the params. `(None, None)`
    when no breakdown is asked for."""
    profile, data = None, {}
    if params is not None:
        data = load_yaml(params).get("data") or {}
        if not facets:
            evaluation = eval_params(params)
            facets, profile = evaluation.breakdown, evaluation.breakdown_profile
    if not facets:
        return None, None
    custom = any(f not in BUILTIN_FACETS for f in facets)
    return load_facets(facets, facets_file or (data.get("queries") if custom else None),
                       skills or (data.get("skills") if "skill_category" in facets else None)
                       ), profile
