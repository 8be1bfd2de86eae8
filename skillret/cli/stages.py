"""The pipeline stages' entry points: each parses its ``cmd`` line, runs its stage function
(:mod:`skillret.pipeline.stages` for the stages over every run, :mod:`skillret.pipeline.steps`
for ``normalize_qrels`` and ``score@<run>``, :mod:`skillret.pipeline.fused_runs` for
``fuse@<name>``) under one guard (one line and exit status 2 on bad input, nothing written), and
prints a summary. ``stages/<name>.py`` hands argv to one of these;
``dvc.yaml`` runs them from the project root as ``python -m stages.<name>``, so the stage
imports the ``skillret`` of the tree it runs in (a workspace, a ``dvc exp`` copy, a worktree).
"""

from __future__ import annotations

import argparse
import sys

from skillret.cli.guard import guarded

SCORE_OUTPUTS = ("normalized", "report", "counts", "metrics", "per_query", "plots", "contract")


def _parser(doc: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(doc or "").partition("\n\n")[0])
    parser.add_argument("--params", default="params.yaml")
    return parser


def score(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage score@<run>: validate one registered (or fused) run, then score it."""
    parser = _parser(doc)
    parser.add_argument("--run-name", required=True, help="a name under runs: in params.yaml")
    parser.add_argument("--run-file", metavar="PATH",
                        help="score this file under --run-name instead (a fused run: fuse.<name>)")
    parser.add_argument("--qrels", required=True, help="canonical qrels (TSV)")
    for name in SCORE_OUTPUTS:
        parser.add_argument(f"--{name.replace('_', '-')}", required=True, metavar="PATH")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import steps
        from skillret.render.tables import scores_table

        entry, report, scores = steps.score_stage(
            args.params, args.run_name, args.run_file, args.qrels,
            {name: getattr(args, name) for name in SCORE_OUTPUTS})
        for warning in report["warnings"]:
            print(f"validate: warning: {warning}", file=sys.stderr)
        print(f"{entry.name}: {entry.path}")
        print(scores_table(scores))

    return guarded(work, prog=f"score@{args.run_name}")


def normalize_qrels(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage normalize_qrels: judgments in any supported format -> canonical TSV, statistics."""
    parser = _parser(doc)
    parser.add_argument("--output", required=True, help="canonical qrels (TSV)")
    parser.add_argument("--stats", required=True, help="qrels statistics (JSON metrics)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import steps
        steps.normalize_qrels_stage(args.params, args.output, args.stats)

    return guarded(work, prog="normalize_qrels")


def fuse(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage fuse@<name>: the fused run <name> of params.yaml's ``fuse`` section, as TREC."""
    parser = _parser(doc)
    parser.add_argument("--name", required=True, help="a name under fuse: in params.yaml")
    parser.add_argument("--runs", required=True, metavar="PATTERN",
                        help="where a registered run's canonical file is, {} for its name")
    parser.add_argument("--output", required=True, metavar="PATH")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline.fused_runs import fuse_from_params

        notices: list[str] = []
        fusion, names, counts = fuse_from_params(args.params, args.name, args.output,
                                                 run_pattern=args.runs, notices=notices)
        for notice in notices:
            print(f"fuse@{args.name}: note: {notice}", file=sys.stderr)
        print(f"{args.name}: {fusion.describe(names)}: {counts['queries']} queries, "
              f"{counts['rows']} results -> {args.output}")

    return guarded(work, prog=f"fuse@{args.name}")


def curves(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage curves: every run's metric-vs-K records in one file, for the overlay chart."""
    parser = _parser(doc)
    parser.add_argument("--runs", required=True, help="folder of per-run plot files")
    parser.add_argument("--output", required=True, help="all runs' records (JSON)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import stages
        stages.curves(args.params, args.runs, args.output)

    return guarded(work, prog="curves")


def compare(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage compare: paired tests of every run against compare.baseline."""
    parser = _parser(doc)
    parser.add_argument("--per-query", required=True,
                        help="folder of the per-query tables, <run>.tsv")
    parser.add_argument("--output", required=True, help="the comparison (JSON)")
    parser.add_argument("--markdown", required=True, help="the report (Markdown)")
    parser.add_argument("--qrels", help="canonical qrels: the tests within the strata of "
                                        "eval.breakdown need them")
    parser.add_argument("--queries", metavar="DIR",
                        help="write each run's largest per-query changes against the "
                             "baseline to DIR/<run>.md (needs --qrels and --canonical)")
    parser.add_argument("--canonical", action="append", default=[], metavar="PATTERN",
                        help="where a run's canonical Parquet is, {} for its name (repeatable: "
                             "the first that exists)")
    args = parser.parse_args(argv)

    def work():
        from skillret.render.breakdown import stratified_table
        from skillret.render.compare import terminal_table
        from skillret.pipeline import stages

        comparison, notes, settings = stages.compare(args.params, args.per_query, args.output,
                                                     args.markdown, args.qrels, args.queries,
                                                     args.canonical)
        for note in notes:
            print(f"compare: note: {note}", file=sys.stderr)
        print(terminal_table(comparison.result))
        if "breakdown" in comparison.result:
            print("\n" + stratified_table(comparison.result["breakdown"],
                                           settings["correction"]))

    return guarded(work, prog="compare")


def breakdown_plot(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage breakdown_plot: every run's breakdown (eval.breakdown) as one plot file."""
    parser = _parser(doc)
    parser.add_argument("--metrics", required=True, help="directory of the runs' metrics files")
    parser.add_argument("--output", required=True, help="plot records (JSON)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import stages
        stages.breakdown_plot(args.params, args.metrics, args.output)

    return guarded(work, prog="breakdown_plot")


def plots_page(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage plots_page: the offline page of dvc plots show/diff (plots.html_template)."""
    parser = argparse.ArgumentParser(description=(doc or "").partition("\n\n")[0])
    parser.add_argument("--output", required=True, help="the HTML page template")
    args = parser.parse_args(argv)

    def work():
        from skillret.render.plots import write_html_template
        write_html_template(args.output)

    return guarded(work, prog="plots_page")
