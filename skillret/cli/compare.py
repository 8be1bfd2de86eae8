"""`skillret-eval compare`: paired significance tests between runs, or between two git
revisions of the pipeline's runs."""

from __future__ import annotations

from skillret.analysis.breakdown import load_facets, stratified_tests
from skillret.analysis.compare import DEFAULT_METRICS, compare, compare_pairs, flag_unjudged
from skillret.api import per_query_values
from skillret.cli.options import distinct_named_runs, metrics_from, open_runs, run_hints, tell
from skillret.errors import ConfigError
from skillret.io.readers import read_qrels
from skillret.pipeline import comparable
from skillret.pipeline.revisions import Revision
from skillret.render.compare import stratified_table, terminal_table, write_comparison
from skillret.scoring.names import metric_names, parse_metric


def _pairs(args, metrics: list[str], settings: dict):
    """The pairs to test and how to label them, from the command's options."""
    if args.rev:
        if args.run_format or args.columns or args.run_options:
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
            files = Revision(args.repo, args.rev[0])
            registered = files.runs()
            if args.baseline not in registered:
                raise ConfigError(f"{files.label}: unknown baseline {args.baseline!r} "
                                  f"(registered or fused: {', '.join(registered) or 'none'})")
            names = [n for n in (args.run or registered) if n != args.baseline]
            tables = files.per_query_tables([args.baseline] + names, metrics)
            return compare((args.baseline, tables[args.baseline]),
                           {n: tables[n] for n in names}, metrics, revision=files.label,
                           **settings)
        old = Revision(args.repo, args.rev[0])
        new = Revision(args.repo, args.rev[1] if len(args.rev) > 1 else None)
        names, only = args.run, []
        if not names:
            at_old, at_new = old.runs(), new.runs()
            names = [n for n in at_old if n in at_new]
            only = [f"{label} only: {', '.join(missing)}" for label, missing in (
                (old.label, [n for n in at_old if n not in at_new]),
                (new.label, [n for n in at_new if n not in at_old])) if missing]
        if not names:
            raise ConfigError(f"no run is scored at both {old.label} and {new.label}")
        keep, header = comparable.check(old, new, names, args.allow_different_judgments)
        before = comparable.restricted(old.per_query_tables(names, metrics), keep)
        after = comparable.restricted(new.per_query_tables(names, metrics), keep)
        comparison, notes = compare_pairs({n: (before[n], after[n]) for n in names}, metrics,
                                          baseline_label=old.label, against=new.label,
                                          **settings)
        flag_unjudged(comparison.result, {n: (old.judged(n), new.judged(n)) for n in names})
        if only:
            notes = [f"runs at one revision only, not compared: {'; '.join(only)}", *notes]
        if header is not None:
            comparison.result["note"] = header
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
    qrels = read_qrels(args.qrels, split=args.split)
    runs = open_runs(args, named)
    extra = sorted({f"Judged@{m.k}" for m in map(parse_metric, metrics) if m.k} - set(metrics))
    with run_hints(args, {path: spec for (_, path), spec in zip(named, args.run)}):
        tables = {n: per_query_values(qrels, runs[n], metrics + extra, p) for n, p in named}
    judged = {n: {k: float(t.values[k].mean()) for k in extra} for n, t in tables.items()}
    others = {n: t for n, t in tables.items() if n != baseline}
    comparison, notes = compare((baseline, tables[baseline]), others, metrics, **settings)
    flag_unjudged(comparison.result, {n: (judged[baseline], judged[n]) for n in others})
    return comparison, notes


def command(args) -> int:
    """`skillret-eval compare`: print the table; write the JSON and Markdown last."""
    metrics, rounding = metrics_from(args, lambda: metric_names(DEFAULT_METRICS))
    settings = dict(permutations=args.permutations, bootstrap=args.bootstrap, seed=args.seed,
                    correction=args.correction, alpha=args.alpha, rounding=rounding)
    facets = _facets(args, metrics)
    comparison, notes = _pairs(args, metrics, settings)
    tell("note", notes)
    if facets is not None:
        comparison.result["breakdown"] = stratified_tests(
            comparison, facets[0], read_qrels(args.qrels, split=args.split), level=facets[1],
            **settings)
    write_comparison(comparison, args.output, args.markdown)
    if "note" in comparison.result:
        print(comparison.result["note"])
    print(terminal_table(comparison.result))
    if facets is not None:
        print("\n" + stratified_table(comparison.result["breakdown"], args.correction))
    return 0


def _facets(args, metrics: list[str]):
    """`--breakdown`: the facets (checked before any scoring) and the first metric's relevance
    level, or None."""
    if not getattr(args, "breakdown", None):
        return None
    if args.rev:
        raise ConfigError("--breakdown tests within strata of run files (--qrels, --run); "
                          "across revisions the compare stage does it")
    return load_facets(args.breakdown, args.facets, args.skills), parse_metric(metrics[0]).rel
