"""`skillret-eval report`: the runs x metrics table of a revision (or of run files), or the
summary between two revisions that a pull request comment shows."""

from __future__ import annotations

import sys

from skillret.analysis.compare import DEFAULTS, flag_unjudged
from skillret.analysis.report import baseline_table, pairwise_table, revision_summary
from skillret.api import per_query_values
from skillret.cli.options import distinct_named_runs, metrics_from, tell
from skillret.errors import ConfigError
from skillret.io.atomic import write_text
from skillret.io.readers import open_run, read_qrels
from skillret.pipeline import comparable
from skillret.pipeline.params import load_yaml
from skillret.pipeline.revisions import Revision, headline_metrics
from skillret.render import report as render
from skillret.scoring.names import metric_names


def _settings(args, section: dict, rounding) -> dict:
    """compare's settings: the options given, else the params' compare section (defaults)."""
    return {**{k: section.get(k, v) if getattr(args, k) is None else getattr(args, k)
               for k, v in DEFAULTS.items()}, "rounding": rounding}


def _from_files(args):
    """(tables, params, source): run files scored here."""
    if args.rev:
        raise ConfigError("give --rev (the pipeline's runs) or --qrels with --run (run files), "
                          "not both")
    if not args.run or len(args.run) < 2:
        raise ConfigError("give --qrels and at least two --run")
    named = distinct_named_runs(args.run)
    params = load_yaml(args.params) if args.params else {}
    metrics, rounding = metrics_from(args, lambda: headline_metrics(params))
    qrels = read_qrels(args.qrels, split=args.split)
    tables = {n: per_query_values(qrels, open_run(p, split=args.split), metrics, p)
              for n, p in named}
    return tables, metrics, rounding, params.get("compare") or {}, None


def _from_pipeline(args):
    if args.params:
        raise ConfigError("--params goes with --qrels: at a revision, its own params.yaml "
                          "is read")
    files = Revision(args.repo, args.rev[0] if args.rev else None)
    metrics, rounding = metrics_from(args, lambda: headline_metrics(files.params))
    names = args.run or files.runs()
    tables = files.per_query_tables(names, metrics)
    return tables, metrics, rounding, files.compare_settings(), files.label


def _table(args):
    tables, metrics, rounding, section, label = (_from_files if args.qrels
                                                 else _from_pipeline)(args)
    settings = _settings(args, section, rounding)
    settings.pop("bootstrap")  # the table shows no interval
    if args.baseline:
        table, notes = baseline_table(tables, args.baseline, metrics, source=label, **settings)
    else:
        table, notes = pairwise_table(tables, metrics, source=label, **settings)
    return render.render_table(table, args.format), notes


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
    keep, header = comparable.check(old, new, [n for n in at_new if n in at_old],
                                    args.allow_different_judgments)
    before = comparable.restricted(old.per_query_tables(at_old, metrics), keep)
    after = comparable.restricted(new.per_query_tables(at_new, metrics), keep)
    settings = _settings(args, new.compare_settings(), rounding)
    summary, notes = revision_summary(old.label, new.label, before, after, metrics, **settings)
    if summary.comparison is not None:
        runs = summary.comparison.result["runs"]
        flag_unjudged(summary.comparison.result, {n: (old.judged(n), new.judged(n)) for n in runs})
    evaluation = new.params.get("eval")
    chosen = evaluation.get("headline") if isinstance(evaluation, dict) else None
    first = metric_names(chosen[:1])[0] if isinstance(chosen, list) and chosen else None
    failed = _gate(args, summary, first if first in metrics else metrics[0], tolerances)
    text = comparable.headed(render.render_summary(summary, args.format, rounding), header,
                             args.format)
    return text, notes if header is None else [header, *notes], failed


def _tolerances(args, metrics: list[str]) -> dict[str, tuple[float, bool]]:
    """`--tolerance METRIC=DROP`: metric -> (drop, relative)."""
    out = {}
    for spec in args.tolerance or []:
        metric, sep, value = spec.partition("=")
        relative = value.endswith("%")
        try:
            drop = float(value.rstrip("%")) if sep else -1.0
        except ValueError:
            drop = -1.0
        if drop < 0:
            raise ConfigError(f"--tolerance {spec}: expected METRIC=DROP, DROP a number >= 0 "
                              f"or a percentage (NDCG@10=0.005, NDCG@10=1%)")
        name = metric_names([metric])[0]
        if name not in metrics:
            raise ConfigError(f"--tolerance {spec}: {name} is not in the report "
                              f"({', '.join(metrics)}); add --metric {name}")
        out[name] = (drop, relative)
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


def command(args) -> int:
    """Compute everything, then print it (or write `--output`)."""
    failed, gated = [], args.fail_if_worse or bool(args.tolerance)
    if args.rev and len(args.rev) > 1:
        text, notes, failed = _summary(args)
    elif gated:
        raise ConfigError("--fail-if-worse and --tolerance gate the summary between two "
                          "revisions: give --rev twice")
    else:
        text, notes = _table(args)
    tell("note", notes)
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    tell("gate failed", failed)
    if gated and not failed:
        print("skillret-eval: gate passed", file=sys.stderr)
    return 1 if failed else 0
