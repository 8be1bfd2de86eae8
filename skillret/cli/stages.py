"""The pipeline stages' entry points: each parses its ``cmd`` line, runs its step of
:mod:`skillret.pipeline.stages` under one guard (one line and exit status 2 on bad input,
nothing written), and prints a summary of a few lines (the details are in the files it wrote).
``stages/<name>.py`` hands argv to one of these; ``dvc.yaml`` runs them from the project root as
``python -m stages.<name>``, so the stage imports the ``skillret`` of the tree it runs in (a
workspace, a ``dvc exp`` copy, a worktree).

A stage's command names its run and nothing else (``python -m stages.score 'bm25-full'``): its
files are where :mod:`skillret.pipeline.layout` puts them (each option overrides one). The
script ends the process with :func:`~skillret.cli.guard.finish`, as the console script does.
"""

from __future__ import annotations

import argparse
import sys

from skillret.cli.guard import finish, guarded

SCORE_OUTPUTS = ("normalized", "report", "counts", "metrics", "per_query", "plots", "contract")


def _parser(doc: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(doc or "").partition("\n\n")[0])
    parser.add_argument("--params", default="params.yaml")
    return parser


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def score(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage score@<run>: validate one registered (or fused) run, then score it."""
    parser = _parser(doc)
    parser.add_argument("name", nargs="?", metavar="RUN",
                        help="a name under runs: (or, with --fused, under fuse:) in params.yaml")
    parser.add_argument("--run-name", help="the same as RUN")
    parser.add_argument("--fused", action="store_true",
                        help="RUN is a fused run (fuse.<name>): score outputs/fused/<name>.trec")
    parser.add_argument("--run-file", metavar="PATH",
                        help="score this file under RUN instead of runs.<RUN>")
    parser.add_argument("--qrels", help="canonical qrels (TSV; default outputs/qrels.tsv)")
    for name in SCORE_OUTPUTS:
        parser.add_argument(f"--{name.replace('_', '-')}", metavar="PATH")
    args = parser.parse_args(argv)
    name = args.name if args.name is not None else args.run_name
    if name is None:
        parser.error("the run's name is required")

    def work():
        from skillret.pipeline import steps
        from skillret.pipeline.layout import RUN_OUTPUTS

        outputs = {key: getattr(args, key) for key in SCORE_OUTPUTS if getattr(args, key)}
        entry, report, scores, sources = steps.score_stage(
            args.params, name, args.run_file, args.qrels, outputs, fused=args.fused)
        values = scores.to_dict()
        shown = ", ".join(f"{metric} {values[profile][metric]:.5f} ({profile})"
                          for metric, profile in sources)
        queries = values["queries"]
        warnings = report["warnings"]
        where = outputs.get("report") or RUN_OUTPUTS["report"].format(name)
        print(f"{entry.name}: {shown}; {queries['in_both']} of {queries['judged']} judged "
              f"queries answered" + (f"; {_plural(len(warnings), 'warning')} ({where})"
                                     if warnings else ""))

    return guarded(work, prog=f"score@{name}")


def inputs(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage inputs: every file params.yaml names is there, or a stage makes it."""
    parser = _parser(doc)
    parser.add_argument("--output", help="default reports/inputs.json")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import inputs, layout

        checked = inputs.inputs_stage(args.params, args.output or layout.INPUTS)
        later = [path for _, path, present in checked if not present]
        shown = ", ".join(later[:inputs.SHOWN]) + (", ..." if len(later) > inputs.SHOWN else "")
        print(f"{_plural(len(checked), 'input file')} named in {args.params}: "
              + (f"{len(checked) - len(later)} found, {len(later)} made by a stage ({shown})"
                 if later else "all found"))

    return guarded(work, prog="inputs")


def normalize_qrels(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage normalize_qrels: judgments in any supported format -> canonical TSV, statistics."""
    parser = _parser(doc)
    parser.add_argument("--output", help="canonical qrels (TSV; default outputs/qrels.tsv)")
    parser.add_argument("--stats", help="qrels statistics (JSON; default metrics/qrels.json)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import layout, steps
        steps.normalize_qrels_stage(args.params, args.output or layout.QRELS,
                               args.stats or layout.QRELS_STATS)

    return guarded(work, prog="normalize_qrels")


def settings(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage settings: what every run is scored with, and the runs' names, checked once."""
    parser = _parser(doc)
    parser.add_argument("--output", help="default reports/settings.json")
    parser.add_argument("--runs-output", help="default reports/runs.json")
    parser.add_argument("--run-settings", metavar="DIR",
                        help="each registered run's <name>.json (default reports/run_settings)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import stages
        record, runs = stages.settings(args.params, args.output, args.runs_output,
                                       args.run_settings)
        print(f"{_plural(len(runs), 'run')}; {', '.join(record['eval']['profiles'])}; "
              f"headline {', '.join(record['eval']['headline'])}")

    return guarded(work, prog="settings")


def fuse(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage fuse@<name>: the fused run <name> of params.yaml's ``fuse`` section, as TREC."""
    parser = _parser(doc)
    parser.add_argument("name", nargs="?", metavar="NAME",
                        help="a name under fuse: in params.yaml")
    parser.add_argument("--name", dest="name_option", help="the same as NAME")
    parser.add_argument("--runs", metavar="PATTERN",
                        help="where a registered run's canonical file is, {} for its name "
                             "(default outputs/runs/{}.parquet)")
    parser.add_argument("--output", metavar="PATH", help="default outputs/fused/<name>.trec")
    args = parser.parse_args(argv)
    name = args.name if args.name is not None else args.name_option
    if name is None:
        parser.error("the fused run's name is required")

    def work():
        from skillret.pipeline import fused_runs, layout

        notices: list[str] = []
        output = args.output or layout.FUSED_RUN.format(name)
        fused_runs.fuse_stage(args.params, name, args.runs, output, notices)
        # quiet: score_fused@<name> prints the fused run's line (its headline metric), and
        # what it is made of is in params.yaml and reports/fusion/<name>.json
        for notice in notices:
            print(f"fuse@{name}: note: {notice}", file=sys.stderr)

    return guarded(work, prog=f"fuse@{name}")


def fuse_inputs(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage fuse_inputs@<name>: what the fused run <name> is made of (settings, input runs'
    sha256), the one file fuse@<name> depends on."""
    parser = _parser(doc)
    parser.add_argument("name", metavar="NAME", help="a name under fuse: in params.yaml")
    parser.add_argument("--output", metavar="PATH", help="default reports/fusion/<name>.json")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import fused_runs
        from skillret.pipeline.params import check_name

        check_name(args.name, "fused run")
        fused_runs.fusion_inputs_stage(args.params, args.name, args.output)

    return guarded(work, prog=f"fuse_inputs@{args.name}")


def charts(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage charts: every run's curves and breakdown, one file per chart over every run."""
    parser = _parser(doc)
    parser.add_argument("--runs", help="folder of per-run plot files (default plots/runs)")
    parser.add_argument("--metrics", help="folder of the runs' metrics files (default "
                                          "metrics/runs)")
    parser.add_argument("--output", help="all runs' curves (JSON; default plots/curves.json)")
    parser.add_argument("--breakdown", help="all runs' breakdowns (JSON; default "
                                            "plots/breakdown.json)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import stages
        stages.charts(args.params, args.runs, args.metrics, args.output, args.breakdown)

    return guarded(work, prog="charts")


def compare(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage compare: paired tests of every run against compare.baseline; the headline."""
    parser = _parser(doc)
    parser.add_argument("--per-query", help="folder of the per-query tables, <run>.tsv "
                                            "(default outputs/per_query)")
    parser.add_argument("--output", help="the comparison (JSON; default metrics/compare.json)")
    parser.add_argument("--markdown", help="the report (Markdown; default reports/compare.md)")
    parser.add_argument("--qrels", help="canonical qrels: the tests within the strata of "
                                        "eval.breakdown need them (default outputs/qrels.tsv)")
    parser.add_argument("--metrics", help="folder of the runs' metrics files (default "
                                          "metrics/runs)")
    parser.add_argument("--headline", help="the headline (JSON; default metrics/headline.json)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import layout, stages
        from skillret.pipeline.headline import summary_lines

        comparison, notes, settings, table, sources = stages.compare(
            args.params, args.per_query, args.output, args.markdown, args.qrels,
            metrics_folder=args.metrics, headline_path=args.headline)
        for note in notes:
            print(f"compare: note: {note}", file=sys.stderr)
        result = comparison.result
        tests = sum(len(m) for m in result["runs"].values())
        strata = sum(len(m) for cells in (result.get("breakdown") or {}).values()
                     for cell in cells.values() for m in cell["runs"].values())
        lines = summary_lines(table, sources, result["baseline"], settings["alpha"])
        # the tests' count and where they are, on the headline's own line: one screen
        lines[0] += (f"; {_plural(tests, 'test')}" + (f", {strata} in strata" if strata else "")
                     + f": {args.markdown or layout.COMPARE_REPORT}")
        print("\n".join(lines))

    return guarded(work, prog="compare")


def plots_page(argv: list[str] | None = None, doc: str | None = None) -> int:
    """Stage plots_page: the offline page of dvc plots show/diff (plots.html_template)."""
    parser = argparse.ArgumentParser(description=(doc or "").partition("\n\n")[0])
    parser.add_argument("--output", required=True, help="the HTML page template")
    args = parser.parse_args(argv)

    def work():
        from skillret.render.plots import write_html_template
        write_html_template(args.output)

    return guarded(work, prog="plots_page")


#: what ``stages/<name>.py`` calls: ``stages.finish(stages.<name>(doc=__doc__))``
__all__ = ["score", "inputs", "normalize_qrels", "settings", "fuse", "fuse_inputs", "charts",
           "compare", "plots_page", "finish", "SCORE_OUTPUTS"]
