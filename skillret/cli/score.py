"""``skillret-eval score``: a run's metrics under one or more profiles, printed and written."""

from __future__ import annotations

import sys

from skillret.cli.options import (add_facets, add_inputs, profiles_from, qrels_from,
                                  run_from)


def add_parser(sub) -> None:
    p = sub.add_parser("score", help="compute a run's metrics under one or more profiles")
    add_inputs(p)
    p.add_argument("--profile", action="append", metavar="NAME",
                   help="profile to compute (repeatable; default: official, or eval.profiles "
                        "from --params)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the metrics as JSON")
    p.add_argument("--per-query", metavar="FILE",
                   help="write per-query values (TSV; .parquet for Parquet)")
    p.add_argument("--breakdown", action="append", metavar="FACET",
                   help="also give the first profile's metrics per stratum of FACET "
                        "(repeatable): n_required, n_relevant, skill_category, or a field of "
                        "--facets")
    add_facets(p)
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the table")


def command(args) -> int:
    from skillret.io.atomic import reserve

    reserve(args.output, args.per_query)
    with run_from(args) as run:
        return _score(args, run)


def _score(args, run) -> int:
    from skillret.pipeline.steps import score_run
    from skillret.render.tables import scores_table

    names, level, define = profiles_from(args)
    facets, by = _facets(args, names)
    qrels = qrels_from(args)
    scores = score_run(qrels, run, profiles=names, relevance_level=level, define=define,
                       metrics=args.output, per_query=args.per_query, breakdown=facets,
                       breakdown_profile=by)
    for notice in scores.notices:
        print(f"skillret-eval: note: {notice}", file=sys.stderr)
    for warning in scores.warnings:
        print(f"skillret-eval: warning: {warning}", file=sys.stderr)
    if facets is not None:
        from skillret.analysis import breakdown
        by = breakdown.pick_profile(scores, by)
        for warning in breakdown.coverage_warnings(breakdown.coverage(
                facets, scores.qrels, by.relevance_level)):
            print(f"skillret-eval: warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(scores_table(scores))
        if facets is not None:  # computed again for the terminal (milliseconds)
            from skillret.render.breakdown import breakdown_tables
            print("\n" + breakdown_tables(breakdown.breakdown(scores, facets, by), by,
                                           scores.query_counts["evaluated"][by.name]))
    return 0


def _facets(args, profiles: list):
    """The breakdown (--breakdown, or eval.breakdown from --params) and the name of its profile
    (None: the first), its files read and checked before anything is scored."""
    from skillret.analysis.breakdown import requested
    facets, by = requested(args.breakdown, args.facets, args.skills, args.params)
    return facets, by if by in profiles else None
