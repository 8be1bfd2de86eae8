"""``skillret-eval report``: the runs x metrics table of a revision (or of run files) with the
runs each value beats significantly, or, given two revisions, the summary between them that a
pull request comment shows."""

from __future__ import annotations

import sys

from skillret.errors import ConfigError

FORMATS = ("terminal", "markdown", "latex", "csv", "json")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report", help="a results table (best value in bold, the runs each value beats "
                       "significantly) or, with two --rev, the summary between them")
    p.add_argument("--rev", action="append", metavar="REV",
                   help="the pipeline's runs at git revision REV (default: the workspace); "
                        "twice: the summary from the first to the second (`workspace` names "
                        "the files on disk)")
    p.add_argument("--repo", default=".", metavar="DIR", help="project directory for --rev")
    p.add_argument("--qrels", metavar="PATH", help="judgments (a table of run files)")
    p.add_argument("--run", action="append", metavar="[NAME=]PATH",
                   help="a run file (repeatable, with --qrels); from the pipeline: a run's "
                        "name (default: every run)")
    p.add_argument("--baseline", metavar="NAME",
                   help="mark each value against this run (+ / -) instead of every pair")
    p.add_argument("--metric", action="append", metavar="M",
                   help="metric (repeatable; default: the headline of params.yaml, "
                        "eval.headline, else compare.metrics)")
    p.add_argument("--profile", metavar="NAME", help="every metric of this profile")
    p.add_argument("--format", default="terminal", choices=FORMATS)
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--params", metavar="FILE",
                   help="with --qrels: params.yaml giving the headline and the compare "
                        "settings")
    p.add_argument("--permutations", type=int, metavar="N",
                   help="random sign flips (default: compare.permutations, else 10000)")
    p.add_argument("--bootstrap", type=int, metavar="N",
                   help="bootstrap resamples of the summary's 95%% interval (default: "
                        "compare.bootstrap, else 2000)")
    p.add_argument("--seed", type=int, metavar="N", help="random seed (default: compare.seed)")
    p.add_argument("--alpha", type=float, metavar="A",
                   help="significance level of the adjusted p (default: compare.alpha, 0.05)")
    p.add_argument("--correction", choices=("holm", "bh", "none"),
                   help="adjustment over the whole family (default: compare.correction, holm)")
    p.add_argument("--split", metavar="NAME", help="split inside SkillRet files")


def _metrics(args, params: dict) -> tuple[list[str], int | None]:
    from skillret.analysis.compare import metric_names
    from skillret.pipeline.sources import headline_metrics

    if args.metric and args.profile:
        raise ConfigError("give --metric or --profile, not both")
    if args.profile:
        from skillret.scoring.names import format_metric
        from skillret.scoring.profiles import resolve_profiles
        profile = resolve_profiles([args.profile])[0]
        return [format_metric(m) for m in profile.parsed()], profile.rounding
    if args.metric:
        return metric_names(args.metric), 5
    return headline_metrics(params), 5


def _settings(args, section: dict, rounding) -> dict:
    """compare's settings: the options given, else the params' compare section (defaults)."""
    from skillret.analysis.compare import DEFAULTS

    settings = {k: section.get(k, v) for k, v in DEFAULTS.items()}
    for key in DEFAULTS:
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    settings["rounding"] = rounding
    return settings


def _from_files(args):
    """(tables, params, source): run files scored here."""
    from skillret.api import per_query_values
    from skillret.cli.options import distinct_named_runs
    from skillret.io.readers import open_run, read_qrels

    if args.rev:
        raise ConfigError("give --rev (the pipeline's runs) or --qrels with --run (run files), "
                          "not both")
    if not args.run or len(args.run) < 2:
        raise ConfigError("give --qrels and at least two --run")
    named = distinct_named_runs(args.run)
    params = {}
    if args.params:
        from skillret.pipeline.params import load_yaml
        params = load_yaml(args.params)
    metrics, rounding = _metrics(args, params)
    qrels = read_qrels(args.qrels, split=args.split)
    tables = {n: per_query_values(qrels, open_run(p, split=args.split), metrics, p)
              for n, p in named}
    return tables, metrics, rounding, params.get("compare") or {}, None


def _from_pipeline(args):
    from skillret.pipeline import sources

    if args.params:
        raise ConfigError("--params goes with --qrels: at a revision, its own params.yaml "
                          "is read")
    files = sources.open_revision(args.repo, args.rev[0] if args.rev else None)
    metrics, rounding = _metrics(args, sources.params_at(files))
    names = args.run or sources.run_names(files)
    tables = sources.per_query_tables(files, names, metrics)
    return tables, metrics, rounding, sources.compare_section(files), files.label


def _table(args):
    from skillret.analysis.report import baseline_table, pairwise_table

    if args.qrels:
        tables, metrics, rounding, section, label = _from_files(args)
    else:
        tables, metrics, rounding, section, label = _from_pipeline(args)
    settings = _settings(args, section, rounding)
    settings.pop("bootstrap")  # the table shows no interval
    if args.baseline:
        return baseline_table(tables, args.baseline, metrics, source=label, **settings)
    return pairwise_table(tables, metrics, source=label, **settings)


def _summary(args):
    from skillret.analysis.report import revision_summary
    from skillret.pipeline import sources

    if args.qrels or args.params:
        raise ConfigError("two --rev compare the pipeline's runs: --qrels and --params do not "
                          "apply")
    if args.baseline:
        raise ConfigError("--baseline marks a table of one revision: give one --rev")
    if args.format == "latex":
        raise ConfigError("--format latex typesets the table of one revision: give one --rev")
    if len(args.rev) > 2:
        raise ConfigError("give --rev once (a table) or twice (a summary between them)")
    old = sources.open_revision(args.repo, args.rev[0])
    new = sources.open_revision(args.repo, args.rev[1])
    metrics, rounding = _metrics(args, sources.params_at(new))
    at_old, at_new = sources.run_names(old), sources.run_names(new)
    if args.run:
        unknown = [n for n in args.run if n not in at_old and n not in at_new]
        if unknown:
            raise ConfigError(f"--run: no run named {unknown[0]!r} at {old.label} or "
                              f"{new.label}")
        at_old = [n for n in at_old if n in args.run]
        at_new = [n for n in at_new if n in args.run]
    before = sources.per_query_tables(old, at_old, metrics)
    after = sources.per_query_tables(new, at_new, metrics)
    settings = _settings(args, sources.compare_section(new), rounding)
    summary, notes = revision_summary(old.label, new.label, before, after, metrics, **settings)
    return summary, notes, rounding


def command(args) -> int:
    """Compute everything, then print it (or write ``--output``)."""
    from skillret.render import report as render

    if args.rev and len(args.rev) > 1:
        summary, notes, rounding = _summary(args)
        text = render.render_summary(summary, args.format, rounding)
    else:
        table, notes = _table(args)
        text = render.render_table(table, args.format)
    for note in notes:
        print(f"skillret-eval: note: {note}", file=sys.stderr)
    if args.output:
        from skillret.io.atomic import write_text
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
