"""The commands over several runs: `compare` (paired significance tests), `report` (the table
of a revision or of run files, or the summary between two revisions), `queries` (the queries
that changed most between two runs) and `fuse` (one ranked run from several)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from skillret.analysis.breakdown import load_facets, stratified_tests
from skillret.analysis.compare import (DEFAULT_METRICS, DEFAULTS, compare as compare_runs,
                                       compare_pairs, flag_unjudged, results_table,
                                       revision_summary)
from skillret.analysis.fusion import DEFAULT_DEPTH, DEFAULT_K, Fusion
from skillret.analysis.queries import KeptRows, explain, name_skills, select, shown_skill_ids
from skillret.api import per_query_values
from skillret.cli.guard import tell
from skillret.errors import ConfigError, InputError
from skillret.io.atomic import write_text
from skillret.io.facets import read_labels
from skillret.io.readers import open_run, parse_columns, read_qrels, run_name
from skillret.io.streams import is_stream, readable
from skillret.pipeline import comparable
from skillret.pipeline.params import load_yaml
from skillret.pipeline.revisions import Revision, headline_metrics
from skillret.pipeline.run_stages import fuse_from_params, fuse_to_file
from skillret.render.compare import (render_queries, stratified_table, terminal_table,
                                     write_comparison)
from skillret.render.report import render_summary, render_table
from skillret.scoring.names import format_metric, metric_names, parse_metric
from skillret.scoring.profiles import resolve_profiles

# Bytes read at a time by `queries`: less than the default, as two runs are read at once.
BLOCK_SIZE = 2 << 20
NO_OUTPUT = "give --output PATH (.trec, .txt, .parquet or .json)"
NOT_BOTH = "give --rev (the pipeline's runs) or --qrels with --run (run files), not both"


def metrics_from(args, default) -> tuple[list[str], int | None]:
    """`--metric` or `--profile`'s metrics, else `default()`; and their rounding."""
    if args.metric and args.profile:
        raise ConfigError("give --metric or --profile, not both")
    if args.profile:
        profile = resolve_profiles([args.profile])[0]
        return [format_metric(m) for m in profile.parsed()], profile.rounding
    return metric_names(args.metric) if args.metric else default(), 5


def _settings(args, section: dict, rounding) -> dict:
    """compare's settings: the options given, else the params' compare section (defaults)."""
    return {**{k: section.get(k, v) if getattr(args, k) is None else getattr(args, k)
               for k, v in DEFAULTS.items()}, "rounding": rounding}


def named_run(text: str) -> tuple[str, str]:
    """`NAME=PATH`, or a path named by `run_name` (`runs/bm25.k1.trec.gz` -> `bm25.k1`)."""
    name, sep, path = text.partition("=")
    if sep and name and path and "/" not in name and not os.path.exists(text):
        return name, path
    return run_name(text), text


def distinct_named_runs(specs: list[str], each: bool = False) -> list[tuple[str, str]]:
    """(name, path) of each `--run`; two alike stop with one line (`each`: naming the first)."""
    named = [named_run(spec) for spec in specs]
    names = [name for name, _ in named]
    if each and len(set(names)) != len(names):
        twice = next(name for i, name in enumerate(names) if name in names[:i])
        raise ConfigError(f"two runs are named {twice!r}: name them with --run NAME=PATH")
    if len(set(names)) != len(names):
        raise ConfigError(f"two runs are named alike ({', '.join(names)}); name them: "
                          f"--run NAME=PATH")
    return named


@contextlib.contextmanager
def opened_runs(args, named: list[tuple[str, str]]):
    """`{name: RunSource}` of the `--run` options, each read with its own options over those
    given before any run. An error in one of them, opening it or in the block, shows its fix
    right after that run's `--run`."""
    try:
        runs = {}
        for i, (name, path) in enumerate(named):
            given = {k: args.run_options.get((i, k), getattr(args, k, None))
                     for k in ("run_format", "columns", "split")}
            runs[name] = open_run(path, fmt=given["run_format"], split=given["split"],
                                  columns=parse_columns(given["columns"]))
        yield runs
    except InputError as exc:
        spec = exc.path and next((spec for (_, path), spec in zip(named, args.run)
                                  if os.path.abspath(path) == os.path.abspath(exc.path)), None)
        if spec:
            exc.shown_with(run=spec)
        raise


def _pairs(args, metrics: list[str], settings: dict):
    """The pairs tested, from the command's options: (comparison, notes, the qrels read)."""
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
            tables = files.per_query_tables([args.baseline] + [
                n for n in (args.run or registered) if n != args.baseline], metrics)
            return (*compare_runs((args.baseline, tables.pop(args.baseline)), tables, metrics,
                                  revision=files.label, **settings), None)
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
        before, after, header = _judged_alike(args, old, new, names, names, metrics)
        comparison, notes = compare_pairs({n: (before[n], after[n]) for n in names}, metrics,
                                          baseline_label=old.label, against=new.label,
                                          **settings)
        flag_unjudged(comparison.result, {n: (old.judged(n), new.judged(n)) for n in names})
        if only:
            notes = [f"runs at one revision only, not compared: {'; '.join(only)}", *notes]
        if header is not None:
            comparison.result["note"] = header
        return comparison, notes, None
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
    extra = sorted({f"Judged@{m.k}" for m in map(parse_metric, metrics) if m.k} - set(metrics))
    with opened_runs(args, named) as runs:
        tables = {n: per_query_values(qrels, runs[n], metrics + extra, p) for n, p in named}
    judged = {n: {k: float(t.values[k].mean()) for k in extra} for n, t in tables.items()}
    comparison, notes = compare_runs((baseline, tables.pop(baseline)), tables, metrics, **settings)
    flag_unjudged(comparison.result, {n: (judged[baseline], judged[n]) for n in tables})
    return comparison, notes, qrels


def _judged_alike(args, old, new, at_old: list[str], at_new: list[str], metrics: list[str]):
    """The per-query tables of `at_old` at `old` and of `at_new` at `new`, on the queries judged
    alike at both (`comparable.check` of the runs at both), and the header saying so, if any."""
    keep, header = comparable.check(old, new, [n for n in at_new if n in at_old],
                                    args.allow_different_judgments)
    return (comparable.restricted(old.per_query_tables(at_old, metrics), keep),
            comparable.restricted(new.per_query_tables(at_new, metrics), keep), header)


def compare(args) -> int:
    """`skillret-eval compare`: print the table; write the JSON and Markdown last."""
    metrics, rounding = metrics_from(args, lambda: metric_names(DEFAULT_METRICS))
    settings = _settings(args, {}, rounding)
    facets = None
    if args.breakdown:  # the facets checked before any scoring
        if args.rev:
            raise ConfigError("--breakdown tests within strata of run files (--qrels, --run); "
                              "across revisions the compare stage does it")
        facets = load_facets(args.breakdown, args.facets, args.skills)
    comparison, notes, qrels = _pairs(args, metrics, settings)
    tell("note", notes)
    if facets is not None:
        comparison.result["breakdown"] = stratified_tests(
            comparison, facets, qrels, level=parse_metric(metrics[0]).rel, **settings)
    write_comparison(comparison, args.output, args.markdown)
    if "note" in comparison.result:
        print(comparison.result["note"])
    print(terminal_table(comparison.result))
    if facets is not None:
        print("\n" + stratified_table(comparison.result["breakdown"], args.correction))
    return 0


def _table(args):
    """(text, notes) of the results table of run files scored here, or of the pipeline's runs
    at one revision."""
    if args.qrels:
        if args.rev:
            raise ConfigError(NOT_BOTH)
        if not args.run or len(args.run) < 2:
            raise ConfigError("give --qrels and at least two --run")
        named = distinct_named_runs(args.run)
        params = load_yaml(args.params) if args.params else {}
        metrics, rounding = metrics_from(args, lambda: headline_metrics(params))
        qrels = read_qrels(args.qrels, split=args.split)
        tables = {n: per_query_values(qrels, open_run(p, split=args.split), metrics, p)
                  for n, p in named}
        section, label = params.get("compare") or {}, None
    else:
        if args.params:
            raise ConfigError("--params goes with --qrels: at a revision, its own params.yaml "
                              "is read")
        files = Revision(args.repo, args.rev[0] if args.rev else None)
        metrics, rounding = metrics_from(args, lambda: headline_metrics(files.params))
        tables = files.per_query_tables(args.run or files.runs(), metrics)
        section, label = files.compare_settings(), files.label
    settings = _settings(args, section, rounding)
    settings.pop("bootstrap")  # the table shows no interval
    table, notes = results_table(tables, metrics, source=label,
                                 baseline=args.baseline or None, **settings)
    return render_table(table, args.format), notes


def _summary(args):
    """(text, notes, the gate's failures) of the summary between two revisions."""
    if args.qrels or args.params:
        raise ConfigError("two --rev compare the pipeline's runs: --qrels and --params do not "
                          "apply")
    if args.baseline:
        raise ConfigError("--baseline marks a table of one revision: give one --rev")
    if args.format == "latex":
        raise ConfigError("--format latex typesets the table of one revision: give one --rev")
    if len(args.rev) > 2:
        raise ConfigError("give --rev once (a table) or twice (a summary between them)")
    old = Revision(args.repo, args.rev[0])
    new = Revision(args.repo, args.rev[1])
    metrics, rounding = metrics_from(args, lambda: headline_metrics(new.params))
    tolerances = _tolerances(args, metrics)  # a bad gate is an error before any work
    at_old, at_new = old.runs(), new.runs()
    if args.run:
        unknown = [n for n in args.run if n not in at_old and n not in at_new]
        if unknown:
            raise ConfigError(f"--run: no run named {unknown[0]!r} at {old.label} or "
                              f"{new.label}")
        at_old = [n for n in at_old if n in args.run]
        at_new = [n for n in at_new if n in args.run]
    before, after, header = _judged_alike(args, old, new, at_old, at_new, metrics)
    settings = _settings(args, new.compare_settings(), rounding)
    summary, notes = revision_summary(old.label, new.label, before, after, metrics, **settings)
    if summary.comparison is not None:
        runs = summary.comparison.result["runs"]
        flag_unjudged(summary.comparison.result, {n: (old.judged(n), new.judged(n)) for n in runs})
    evaluation = new.params.get("eval")
    chosen = evaluation.get("headline") if isinstance(evaluation, dict) else None
    first = metric_names(chosen[:1])[0] if isinstance(chosen, list) and chosen else None
    failed = _gate(args, summary, first if first in metrics else metrics[0], tolerances)
    text = comparable.headed(render_summary(summary, args.format, rounding), header,
                             args.format)
    return text, notes if header is None else [header, *notes], failed


def _tolerances(args, metrics: list[str]) -> dict[str, tuple[float, bool]]:
    """`--tolerance METRIC=DROP`: metric -> (drop, relative)."""
    out = {}
    for spec in args.tolerance or []:
        metric, sep, value = spec.partition("=")
        bad = (f"--tolerance {spec}: expected METRIC=DROP, DROP a number >= 0 or a "
               f"percentage (NDCG@10=0.005, NDCG@10=1%)")
        drop = _number(value.rstrip("%") if sep else "-1", float, bad)
        if drop < 0:
            raise ConfigError(bad)
        name = metric_names([metric])[0]
        if name not in metrics:
            raise ConfigError(f"--tolerance {spec}: {name} is not in the report "
                              f"({', '.join(metrics)}); add --metric {name}")
        out[name] = (drop, value.endswith("%"))
    return out


def _gate(args, summary, headline: str, tolerances: dict) -> list[str]:
    """The rows that fail `--fail-if-worse` (on `headline`) and `--tolerance`, worded."""
    if summary.comparison is None:
        return []
    failed = []
    for run, rows in summary.comparison.result["runs"].items():
        for metric, row in rows.items():
            change = f"{run} {metric}: {row['baseline']} -> {row['run']} ({row['delta']:+})"
            if args.fail_if_worse and metric == headline and row["significant"] \
                    and row["delta"] < 0:
                failed.append(f"{change}, significantly worse (p_adj {row['p_adjusted']})")
            if metric in tolerances:
                drop, relative = tolerances[metric]
                allowed = drop / 100 * abs(row["baseline"]) if relative else drop
                if -row["delta"] > allowed:
                    failed.append(f"{change}, a drop beyond the tolerance "
                                  f"{drop}{'%' if relative else ''}")
    return failed


def report(args) -> int:
    """`skillret-eval report`: compute everything, then print it (or write `--output`)."""
    failed, gated = [], args.fail_if_worse or bool(args.tolerance)
    if args.rev and len(args.rev) > 1:
        text, notes, failed = _summary(args)
    elif gated:
        raise ConfigError("--fail-if-worse and --tolerance gate the summary between two "
                          "revisions: give --rev twice")
    else:
        text, notes = _table(args)
    tell("note", notes)
    _write(args.output, text)
    tell("gate failed", failed)
    if gated and not failed:
        print("skillret-eval: gate passed", file=sys.stderr)
    return 1 if failed else 0


def _sides(args):
    """(metric, sides, qrels, the data files by key, title, header) of two run files, each run's
    rows kept as it streams (`KeptRows`) for the rankings of the queries chosen; else of the
    pipeline's outputs at one or two revisions."""
    if args.qrels:
        if args.rev:
            raise ConfigError(NOT_BOTH)
        if not args.run or len(args.run) != 2:
            raise ConfigError("give --qrels and two --run: A, then B")
        named = [named_run(r) for r in args.run]
        if named[0][0] == named[1][0]:  # named alike: by their paths
            named = [(path, path) for _, path in named]
        metric = metric_names([args.metric or "NDCG@10"])[0]
        sides = []
        with contextlib.ExitStack() as stack:  # both runs are read while the qrels are
            sources = [stack.enter_context(open_run(p, split=args.split, block_size=BLOCK_SIZE)
                                           .read_ahead()) for _, p in named]
            qrels = read_qrels(args.qrels, split=args.split)
            for (name, path), source in zip(named, sources):
                kept = KeptRows()
                table = per_query_values(qrels, source, [metric], path, watch=kept.watch)
                sides.append((name, table, kept.rankings))

        def data_file(key):
            path = {"queries": args.query_texts, "skills": args.skills}[key]
            if not path:
                return None
            copy = Path(readable(path))
            if not copy.is_file():
                raise InputError(path, "no such file")
            return copy.read_bytes(), path

        return metric, sides, qrels, data_file, None, None
    if args.query_texts or args.skills:
        raise ConfigError("--query-texts and --skills go with --qrels: the pipeline's are "
                          "data.queries and data.skills")
    revs = args.rev or [None]
    if len(revs) > 2:
        raise ConfigError("give --rev once or twice")
    keep = header = None
    if len(revs) == 2:
        if not args.run or len(args.run) != 1:
            raise ConfigError("with two --rev, name one run: --run NAME")
        old, new = (Revision(args.repo, r) for r in revs)
        keep, header = comparable.check(old, new, args.run, args.allow_different_judgments)
        plan = [(old, args.run[0], old.label), (new, args.run[0], new.label)]
        title = args.run[0]
    else:
        if not args.run or len(args.run) != 2:
            raise ConfigError("name two runs, A then B: --run A --run B (or one run and two "
                              "--rev)")
        new = Revision(args.repo, revs[0])
        plan = [(new, args.run[0], args.run[0]), (new, args.run[1], args.run[1])]
        title = None if revs[0] is None else new.label
    metric = metric_names([args.metric])[0] if args.metric else headline_metrics(new.params)[0]
    sides = []
    for files, name, label in plan:
        table = comparable.restricted(files.per_query_tables([name], [metric]), keep)[name]
        canonical, _ = files.canonical_run(name)
        sides.append((label, table, KeptRows.of_table(canonical).rankings))
    return metric, sides, new.qrels(), new.data_file, title, header


def queries(args) -> int:
    if args.worst < 0 or args.best < 0:
        raise ConfigError("--worst and --best must be >= 0")
    metric, sides, qrels, data_file, title, header = _sides(args)
    (label_a, table_a, rank_a), (label_b, table_b, rank_b) = sides
    selected = select(table_a, table_b, metric, worst=args.worst, best=args.best)
    wanted = selected.chosen()
    text_file = data_file("queries") if wanted else None
    labels = read_labels(*text_file, "query", wanted) if text_file else {}
    changes = explain(selected, qrels, rank_a(wanted), rank_b(wanted), label_a=label_a,
                      label_b=label_b, texts=labels, title=title)
    skill_file = data_file("skills") if wanted else None
    if skill_file:
        name_skills(changes, read_labels(*skill_file, "name", shown_skill_ids(changes)))
    if header is not None:
        tell("note", [header])
    _write(args.output, comparable.headed(render_queries(changes, args.format), header,
                                          args.format))
    return 0


def _write(output: str | None, text: str) -> None:
    if output:
        write_text(output, text)
    else:
        sys.stdout.write(text)


def fuse(args) -> int:
    """`skillret-eval fuse`: one ranked run from several (RRF, CombSUM, CombMNZ), e.g.
    `fuse --run bm25.trec --run dense=runs/e5.parquet --method rrf -o hybrid.trec`."""
    notices: list[str] = []
    if args.params:
        if not args.name:
            raise ConfigError("--params needs --name (the fused run to write)")
        if args.run or args.method or args.k or args.norm or args.weight or args.depth or \
                args.run_format or args.columns or args.split:
            raise ConfigError("with --params, the fusion comes from the params file: give "
                              "only --name, --run-pattern and --output")
        if not args.output:
            raise ConfigError(NO_OUTPUT)
        fusion, names, counts = fuse_from_params(args.params, args.name, args.output,
                                                 run_pattern=args.run_pattern, notices=notices)
    else:
        if not args.run or len(args.run) < 2:
            raise ConfigError("give at least two --run PATH")
        if not args.method:
            raise ConfigError("give --method (rrf, combsum or combmnz)")
        named = distinct_named_runs(args.run, each=True)
        names = [name for name, _ in named]
        k = _number(args.k, float, f"--k {args.k!r}: not a number", DEFAULT_K)
        weights = {name: _number(value if sep and name else "x", float,
                                 f"--weight {spec!r}: give NAME=NUMBER")
                   for spec in args.weight or [] for name, sep, value in [spec.partition("=")]}
        depth = _number(args.depth, int, f"--depth {args.depth!r}: not an integer", DEFAULT_DEPTH)
        fusion = Fusion(args.method, k, args.norm, weights, depth)
        fusion.weight_vector(names)
        if not args.output:
            raise ConfigError(NO_OUTPUT)
        for _, path in named:
            if not os.path.exists(path) and not is_stream(path):
                raise InputError(path, "no such run file")
        with opened_runs(args, named) as runs:
            counts = fuse_to_file(runs, args.output, fusion, notices=notices)
    tell("note", notices)
    print(f"{fusion.describe(names)}: {counts['queries']} queries, {counts['rows']} "
          f"results -> {args.output}")
    return 0


def _number(text: str | None, kind, error: str, default=None):
    if text is None:
        return default
    try:
        return kind(text)
    except ValueError:
        raise ConfigError(error) from None
