"""`skillret-eval validate`: check a run against the qrels before it is scored."""

from __future__ import annotations

from skillret.analysis.breakdown import add_coverage, check_coverage, load_facets
from skillret.cli.options import profiles_from, qrels_from, run_from, tell
from skillret.errors import ConfigError, ValidationFailed
from skillret.io.atomic import reserve, write_json
from skillret.pipeline.params import load_yaml, validate_section
from skillret.scoring.profiles import profile_cutoffs, resolve_profiles
from skillret.validation.checks import validate_and_score


def command(args) -> int:
    reserve(args.report, args.normalized)
    strict = args.strict or (validate_section(load_yaml(args.params), args.params)
                             if args.params else False)
    depth, cutoffs = args.depth, None
    if depth is None:
        names, level, define = profiles_from(args)
        resolved = resolve_profiles(names, define=define, relevance_level=level)
        depth, cutoffs = max(p.depth for p in resolved), profile_cutoffs(resolved)
    if depth < 1:
        raise ConfigError("--depth must be at least 1")
    with run_from(args, with_rank=True) as run:
        qrels = qrels_from(args)
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
