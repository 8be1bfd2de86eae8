"""``skillret-eval compare``: paired significance tests between runs, or between two git
revisions of the pipeline's runs."""

from __future__ import annotations

import sys

from skillret.cli.options import (add_facets, add_limits, add_runs, distinct_named_runs,
                                  open_runs, run_hints)
from skillret.errors import ConfigError


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="paired significance tests between runs, or between two "
                                       "git revisions of the registered runs")
    p.add_argument("--qrels", metavar="PATH", help="judgments (comparing run files)")
    add_runs(p, "a run file (repeatable; named by its file stem unless NAME= is given; "
                "--format, --columns, --split after it say how to read it); with --rev: a "
                "registered run's name (default: every one)",
             "split inside SkillRet files: before any --run, of the qrels and every run; "
             "after a --run, of that run")
    p.add_argument("--baseline", metavar="NAME",
                   help="the run the others are compared with (default: the first); with one "
                        "--rev: the registered runs of that revision against this one")
    p.add_argument("--rev", action="append", metavar="REV",
                   help="compare the registered runs at git revision REV (the baseline) with "
                        "the workspace, or with a second --rev")
    p.add_argument("--repo", default=".", metavar="DIR", help="project directory for --rev")
    p.add_argument("--metric", action="append", metavar="M",
                   help="metric to test (repeatable; default: the recommended profile's)")
    p.add_argument("--profile", metavar="NAME", help="test every metric of this profile")
    p.add_argument("--permutations", type=int, default=10000, metavar="N",
                   help="random sign flips of the randomization test (default 10000)")
    p.add_argument("--bootstrap", type=int, default=2000, metavar="N",
                   help="bootstrap resamples of the 95%% interval (default 2000; 0: none)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="random seed (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="significance level of the adjusted p-values (default 0.05)")
    p.add_argument("--correction", default="holm", choices=("holm", "bh", "none"),
                   help="multiple-comparison adjustment over every (run, metric) (default holm)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the results as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write a Markdown report")
    p.add_argument("--breakdown", action="append", metavar="FACET",
                   help="also test within each stratum of FACET (repeatable; run files only), "
                        "adjusted over every stratum, run and metric")
    add_facets(p)
    add_limits(p)


def _chosen_metrics(args) -> tuple[list[str], int | None]:
    from skillret.analysis.compare import DEFAULT_METRICS, metric_names

    if args.metric and args.profile:
        raise ConfigError("give --metric or --profile, not both")
    if args.profile:
        from skillret.scoring.profiles import resolve_profiles
        from skillret.scoring.names import format_metric
        profile = resolve_profiles([args.profile])[0]
        return [format_metric(m) for m in profile.parsed()], profile.rounding
    return metric_names(args.metric or DEFAULT_METRICS), 5


def _pairs(args, metrics: list[str], settings: dict):
    """The pairs to test and how to label them, from the command's options."""
    from skillret.analysis.compare import compare, compare_pairs

    if args.rev:
        from skillret.pipeline.revisions import RevisionFiles, load_tables, per_query_paths
        if args.run_format or args.columns or any(args.run_options):
            raise ConfigError("--rev reads the registered runs' per-query tables: --format "
                              "and --columns do not apply (params.yaml's run_options do)")
        if len(args.rev) > 2:
            raise ConfigError("give --rev once (against the workspace) or twice")
        if args.qrels:
            raise ConfigError("--rev reads the registered runs' per-query tables: --qrels "
                              "does not apply")
        if args.baseline:  # the registered runs of one revision against one of them
            if len(args.rev) > 1:
                raise ConfigError("--baseline compares runs within one revision: give one --rev")
            files = RevisionFiles(args.repo, args.rev[0])
            registered = per_query_paths(files)[0]
            if args.baseline not in registered:
                raise ConfigError(f"{files.label}: unknown baseline {args.baseline!r} "
                                  f"(registered or fused: {', '.join(registered) or 'none'})")
            names = [n for n in (args.run or registered) if n != args.baseline]
            tables = load_tables(files, [args.baseline] + names, metrics)
            return compare((args.baseline, tables[args.baseline]),
                           {n: tables[n] for n in names}, metrics, revision=files.label,
                           **settings)
        old = RevisionFiles(args.repo, args.rev[0])
        new = RevisionFiles(args.repo, args.rev[1] if len(args.rev) > 1 else None)
        names, only = args.run, []
        if not names:
            at_old, at_new = per_query_paths(old)[0], per_query_paths(new)[0]
            names = [n for n in at_old if n in at_new]
            only = [f"{label} only: {', '.join(missing)}" for label, missing in (
                (old.label, [n for n in at_old if n not in at_new]),
                (new.label, [n for n in at_new if n not in at_old])) if missing]
        if not names:
            raise ConfigError(f"no run is scored at both {old.label} and {new.label}")
        before, after = load_tables(old, names, metrics), load_tables(new, names, metrics)
        comparison, notes = compare_pairs({n: (before[n], after[n]) for n in names}, metrics,
                                          baseline_label=old.label, against=new.label,
                                          **settings)
        if only:
            notes = [f"runs at one revision only, not compared: {'; '.join(only)}", *notes]
        return comparison, notes
    if not args.qrels or not args.run:
        raise ConfigError("give --qrels and at least two --run (or --rev A [--rev B])")
    named = distinct_named_runs(args.run)
    names = [n for n, _ in named]
    baseline = args.baseline or names[0]
    if baseline not in names:
        raise ConfigError(f"unknown baseline {baseline!r} (runs: {', '.join(names)})")
    if len(names) < 2:
        raise ConfigError("give at least two --run: a baseline and a run to compare with it")
    from skillret.api import per_query_values
    from skillret.io.readers import read_qrels
    qrels = read_qrels(args.qrels, split=args.split)
    runs = open_runs(args, named)
    with run_hints(args, {path: spec for (_, path), spec in zip(named, args.run)}):
        tables = {n: per_query_values(qrels, runs[n], metrics, p) for n, p in named}
    others = {n: t for n, t in tables.items() if n != baseline}
    return compare((baseline, tables[baseline]), others, metrics, **settings)


def command(args) -> int:
    """``skillret-eval compare``: print the table; write the JSON and Markdown last."""
    from skillret.render.compare import terminal_table, write_comparison

    metrics, rounding = _chosen_metrics(args)
    settings = dict(permutations=args.permutations, bootstrap=args.bootstrap, seed=args.seed,
                    correction=args.correction, alpha=args.alpha, rounding=rounding)
    facets = _facets(args, metrics)
    comparison, notes = _pairs(args, metrics, settings)
    for note in notes:
        print(f"skillret-eval: note: {note}", file=sys.stderr)
    if facets is not None:
        from skillret.io.readers import read_qrels
        from skillret.analysis.breakdown import stratified_tests
        comparison.result["breakdown"] = stratified_tests(
            comparison, facets[0], read_qrels(args.qrels, split=args.split), level=facets[1],
            **settings)
    write_comparison(comparison, args.output, args.markdown)
    print(terminal_table(comparison.result))
    if facets is not None:
        from skillret.render.breakdown import stratified_table
        print("\n" + stratified_table(comparison.result["breakdown"], args.correction))
    return 0


def _facets(args, metrics: list[str]):
    """``--breakdown``: the facets (files read and checked before any scoring) and the
    relevance level of the first metric, or None."""
    if not getattr(args, "breakdown", None):
        return None
    if args.rev:
        raise ConfigError("--breakdown tests within strata of run files (--qrels, --run); "
                          "across revisions the compare stage does it")
    from skillret.analysis.breakdown import load_facets
    from skillret.scoring.names import parse_metric
    return load_facets(args.breakdown, args.facets, args.skills), parse_metric(metrics[0]).rel
