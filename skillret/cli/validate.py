"""``skillret-eval validate``: check a run against the qrels before it is scored."""

from __future__ import annotations

import sys

from skillret.cli.options import (add_facets, add_inputs, profiles_from, qrels_from,
                                  run_from)
from skillret.errors import ConfigError


def add_parser(sub) -> None:
    p = sub.add_parser("validate", help="check a run against the qrels before scoring it")
    add_inputs(p)
    p.add_argument("--report", metavar="FILE", help="write the validation report as JSON")
    p.add_argument("--normalized", metavar="FILE",
                   help="write the canonical run (Parquet) when validation passes")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.add_argument("--depth", type=int, metavar="K",
                   help="largest cutoff in use (default: from the profiles, 15)")
    add_facets(p)


def command(args) -> int:
    from skillret.io.atomic import reserve
    from skillret.pipeline.params import validate_params
    from skillret.pipeline.steps import largest_cutoff, resolve

    reserve(args.report, args.normalized)
    strict = args.strict or validate_params(args.params)["strict"]
    depth = args.depth
    if depth is None:
        names, level, define = profiles_from(args)
        depth = largest_cutoff(resolve(names, define=define, relevance_level=level))
    if depth < 1:
        raise ConfigError("--depth must be at least 1")
    with run_from(args, with_rank=True) as run:
        return _validate(args, run, depth, strict)


def _validate(args, run, depth: int, strict: bool) -> int:
    from skillret.errors import ValidationFailed
    from skillret.pipeline.steps import validate_run

    qrels = qrels_from(args)
    facets = None
    if args.facets or args.skills:  # count what a breakdown would put under (missing)
        from skillret.analysis.breakdown import load_facets
        facets = load_facets([], args.facets, args.skills)
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
