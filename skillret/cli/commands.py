"""The CLI's commands: parse options into library calls, print, write outputs last.

Each command runs inside one output set (:mod:`skillret.cli.guard`): its outputs are reserved
first, so an unwritable place fails before any work, and appear together at the end.
"""

from __future__ import annotations

import json
import sys

from skillret.errors import ConfigError


def _run(args, with_rank: bool = False):
    """The run, its reading already begun: it overlaps the imports and the qrels that follow."""
    from skillret.io.readers import open_run, parse_columns
    return open_run(args.run, fmt=args.run_format, split=args.split,
                    columns=parse_columns(args.columns)).read_ahead(with_rank=with_rank)


def _qrels(args):
    from skillret.io.readers import parse_columns, read_qrels
    return read_qrels(args.qrels, fmt=args.qrels_format, split=args.split,
                      columns=parse_columns(args.qrels_columns))


def _profiles(args):
    from skillret.pipeline.params import eval_params
    params = eval_params(args.params)
    names = getattr(args, "profile", None) or (params.profiles if args.params else ["official"])
    level = args.relevance_level if args.relevance_level is not None else params.relevance_level
    return names, level, params.define


def score_command(args) -> int:
    from skillret.io.atomic import reserve

    reserve(args.output, args.per_query)
    with _run(args) as run:
        return _score(args, run)


def _score(args, run) -> int:
    from skillret.pipeline.steps import score_run
    from skillret.render.tables import scores_table

    names, level, define = _profiles(args)
    facets, by = _facets(args, names)
    qrels = _qrels(args)
    scores = score_run(qrels, run, profiles=names, relevance_level=level, define=define,
                       metrics=args.output, per_query=args.per_query, breakdown=facets,
                       breakdown_profile=by)
    for notice in scores.notices:
        print(f"skillret-eval: note: {notice}", file=sys.stderr)
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


def validate_command(args) -> int:
    from skillret.io.atomic import reserve
    from skillret.pipeline.params import validate_params
    from skillret.pipeline.steps import largest_cutoff, resolve

    reserve(args.report, args.normalized)
    strict = args.strict or validate_params(args.params)["strict"]
    depth = args.depth
    if depth is None:
        names, level, define = _profiles(args)
        depth = largest_cutoff(resolve(names, define=define, relevance_level=level))
    if depth < 1:
        raise ConfigError("--depth must be at least 1")
    with _run(args, with_rank=True) as run:
        return _validate(args, run, depth, strict)


def _validate(args, run, depth: int, strict: bool) -> int:
    from skillret.errors import ValidationFailed
    from skillret.pipeline.steps import validate_run

    qrels = _qrels(args)
    facets = None
    if args.facets or args.skills:  # count what a breakdown would put under (missing)
        from skillret.analysis.breakdown import plan
        facets = plan([], args.facets, args.skills)
    try:
        report = validate_run(qrels, run, depth=depth, strict=strict,
                              normalized=args.normalized, report=args.report, facets=facets,
                              relevance_level=args.relevance_level or 1)
    except ValidationFailed as exc:
        for warning in (exc.report or {}).get("warnings", []):
            print(f"skillret-eval: warning: {warning}", file=sys.stderr)
        raise
    for notice in report["notices"]:
        print(f"skillret-eval: note: {notice}", file=sys.stderr)
    for warning in report["warnings"]:
        print(f"skillret-eval: warning: {warning}", file=sys.stderr)
    q, r = report["queries"], report["results"]
    print(f"{report['run']}: {report['status']}: {q['in_run']} queries in the run, "
          f"{q['in_qrels']} judged, {q['in_both']} in both; {r['rows']} results "
          f"({r['min']}-{r['max']} per query); {len(report['warnings'])} warning(s)")
    return 0


def profiles_command(args) -> int:
    from skillret.pipeline.params import eval_params
    from skillret.scoring.profiles import catalogue
    from skillret.render.tables import catalogue_text

    define = eval_params(args.params).define if args.params else {}
    profiles = catalogue(define)
    if args.json:
        print(json.dumps({name: p.describe() for name, p in profiles.items()}, indent=2))
    else:
        print(catalogue_text(profiles))
    return 0


def normalize_qrels_command(args) -> int:
    from skillret.io.atomic import reserve
    from skillret.io.readers import parse_columns
    from skillret.pipeline.steps import normalize_qrels

    reserve(args.output, args.stats)
    stats = normalize_qrels(args.qrels, args.output, args.stats, fmt=args.qrels_format,
                            split=args.split, columns=parse_columns(args.columns))
    print(f"{args.qrels}: {stats['queries']} queries, {stats['pairs']} judgments -> "
          f"{args.output}")
    return 0


def register_command(args) -> int:
    from skillret.pipeline.register import register

    options = {"format": args.run_format, "columns": args.columns, "split": args.split}
    for name, path, added in register(args.params, args.paths, name=args.name, options=options):
        state = "registered" if added else "already registered"
        if not added and any(v is not None for v in options.values()):
            state += "; options set"
        print(f"{name}: {path} ({state})")
    return 0
