"""``skillret-eval``: score, validate, list profiles, normalize qrels, fuse runs.

Bad input ends with one line on stderr naming the file (and line), exit status 2, no traceback
and no output changed (:mod:`skillret.cli.guard`). Heavy modules (numpy, pyarrow, pandas) are
imported inside the commands, so ``--help`` and argument errors return at once.
"""

from __future__ import annotations

import argparse
import gc
import sys

from skillret import __version__
from skillret.cli.guard import EXIT_BAD_INPUT, guarded

__all__ = ["main", "run", "build_parser"]


def _add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--qrels", required=True, metavar="PATH",
                   help="judgments: TREC qrels, SkillRet qrels/queries JSONL, JSON, CSV/TSV, "
                        "Parquet, or a SkillRet data directory")
    p.add_argument("--run", required=True, metavar="PATH",
                   help="ranked results: TREC run, SkillRet results JSON, JSON, JSONL, CSV/TSV, "
                        "Parquet (.gz of text formats too)")
    p.add_argument("--format", dest="run_format", metavar="FMT",
                   help="run format, overriding detection (trec, skillret-json, json, jsonl, "
                        "csv, tsv, parquet)")
    p.add_argument("--qrels-format", metavar="FMT",
                   help="qrels format (trec, jsonl, queries-jsonl, json, csv, tsv, parquet, "
                        "skillret-dir)")
    p.add_argument("--split", metavar="NAME",
                   help="split inside SkillRet files (default: the only one, else 'test')")
    p.add_argument("--columns", metavar="SPEC",
                   help="the run's column names (CSV/TSV/JSONL/Parquet), e.g. "
                        "query=qid,skill=docno,score=sim")
    p.add_argument("--qrels-columns", metavar="SPEC",
                   help="the qrels' column names, e.g. query=qid,skill=docno,relevance=rel")
    p.add_argument("--params", metavar="FILE",
                   help="params.yaml whose 'eval' section gives profiles, relevance level and "
                        "user-defined profiles")
    p.add_argument("--relevance-level", type=int, metavar="N",
                   help="grade >= N counts as relevant (default 1)")
    _add_limits(p)


def _add_limits(p: argparse.ArgumentParser) -> None:
    from skillret.limits import MAX_INPUT_BYTES, MAX_JSON_DEPTH, MAX_RESULTS_PER_QUERY, show_size
    p.add_argument("--max-input-size", type=_size, metavar="SIZE",
                   help="largest JSON, JSON lines or CSV/TSV input once decompressed; they are "
                        f"read whole (default {show_size(MAX_INPUT_BYTES)}; e.g. 512M, 8G)")
    p.add_argument("--max-json-depth", type=_positive, metavar="N",
                   help=f"deepest nesting of a JSON document (default {MAX_JSON_DEPTH})")
    p.add_argument("--max-results-per-query", type=_positive, metavar="N",
                   help=f"most results one query may hold in a run "
                        f"(default {MAX_RESULTS_PER_QUERY:,})")


def _size(text: str) -> int:
    from skillret.limits import parse_size
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def _add_facets(p: argparse.ArgumentParser) -> None:
    p.add_argument("--facets", metavar="FILE",
                   help="per-query facets keyed by query id (JSONL, CSV/TSV, Parquet; SkillRet's "
                        "queries JSONL as it is): any scalar field is a facet")
    p.add_argument("--skills", metavar="FILE",
                   help="SkillRet's skills JSONL (field 'category'), for skill_category")


def _score_parser(sub) -> None:
    p = sub.add_parser("score", help="compute a run's metrics under one or more profiles")
    _add_inputs(p)
    p.add_argument("--profile", action="append", metavar="NAME",
                   help="profile to compute (repeatable; default: official, or eval.profiles "
                        "from --params)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the metrics as JSON")
    p.add_argument("--per-query", metavar="FILE",
                   help="write per-query values (TSV; .parquet for Parquet)")
    p.add_argument("--breakdown", action="append", metavar="FACET",
                   help="also give the first profile's metrics per stratum of FACET "
                        "(repeatable): n_required, n_relevant, skill_category, or a field of "
                        "--facets")
    _add_facets(p)
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the table")


def _validate_parser(sub) -> None:
    p = sub.add_parser("validate", help="check a run against the qrels before scoring it")
    _add_inputs(p)
    p.add_argument("--report", metavar="FILE", help="write the validation report as JSON")
    p.add_argument("--normalized", metavar="FILE",
                   help="write the canonical run (Parquet) when validation passes")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.add_argument("--depth", type=int, metavar="K",
                   help="largest cutoff in use (default: from the profiles, 15)")
    _add_facets(p)


def _profiles_parser(sub) -> None:
    p = sub.add_parser("profiles", help="list the profiles and the definitions of the measures")
    p.add_argument("--params", metavar="FILE", help="also list the profiles defined there")
    p.add_argument("--json", action="store_true", help="print as JSON")


def _normalize_qrels_parser(sub) -> None:
    p = sub.add_parser("normalize-qrels", help="write qrels in canonical form, with statistics")
    p.add_argument("--qrels", required=True, metavar="PATH")
    p.add_argument("--qrels-format", metavar="FMT")
    p.add_argument("--split", metavar="NAME")
    p.add_argument("--columns", metavar="SPEC")
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="canonical qrels (TSV: query_id, skill_id, relevance)")
    p.add_argument("--stats", metavar="FILE", help="write qrels statistics as JSON")
    _add_limits(p)


def _register_parser(sub) -> None:
    p = sub.add_parser("register", help="add run files to params.yaml's runs: (name = file stem)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="run files inside the project")
    p.add_argument("--params", default="params.yaml", metavar="FILE",
                   help="the params file to edit (default: params.yaml)")
    p.add_argument("--name", metavar="NAME", help="the run's name (one file only)")
    p.add_argument("--format", dest="run_format", metavar="FMT",
                   help="written under run_options.<name>.format")
    p.add_argument("--columns", metavar="SPEC", help="written under run_options.<name>.columns")
    p.add_argument("--split", metavar="NAME", help="written under run_options.<name>.split")


def _compare_parser(sub) -> None:
    p = sub.add_parser("compare", help="paired significance tests between runs, or between two "
                                       "git revisions of the registered runs")
    p.add_argument("--qrels", metavar="PATH", help="judgments (comparing run files)")
    p.add_argument("--run", action="append", metavar="[NAME=]PATH",
                   help="a run file (repeatable; named by its file stem unless NAME= is given); "
                        "with --rev: a registered run's name (default: every one)")
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
    p.add_argument("--split", metavar="NAME", help="split inside SkillRet files")
    p.add_argument("--output", "-o", metavar="FILE", help="write the results as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write a Markdown report")
    p.add_argument("--breakdown", action="append", metavar="FACET",
                   help="also test within each stratum of FACET (repeatable; run files only), "
                        "adjusted over every stratum, run and metric")
    _add_facets(p)


def _fuse_parser(sub) -> None:
    p = sub.add_parser("fuse", help="fuse runs into one ranked run (RRF, CombSUM, CombMNZ)")
    p.add_argument("--run", action="append", metavar="[NAME=]PATH",
                   help="a run to fuse (repeatable; named by file stem unless NAME= is given)")
    p.add_argument("--method", metavar="METHOD", help="rrf, combsum or combmnz")
    p.add_argument("--k", metavar="K", help="RRF's constant (default 60)")
    p.add_argument("--norm", metavar="NORM",
                   help="score normalisation for combsum/combmnz: minmax (default), zscore, none")
    p.add_argument("--weight", action="append", metavar="NAME=W",
                   help="weight of a run (repeatable; default 1)")
    p.add_argument("--depth", metavar="N", help="results kept per query (default 100)")
    p.add_argument("--output", "-o", metavar="PATH",
                   help="the fused run: .trec/.txt (TREC), .parquet or .json")
    p.add_argument("--params", metavar="FILE",
                   help="take the fusion NAME from this params.yaml's 'fuse' section")
    p.add_argument("--name", metavar="NAME", help="with --params: the fused run to write")
    p.add_argument("--run-pattern", metavar="PATTERN",
                   help="with --params: where a named run's file is, {} standing for its name "
                        "(e.g. outputs/runs/{}.parquet)")


def _plots_parser(sub) -> None:
    from skillret.cli.plots import add_parser
    add_parser(sub)


_PARSERS = {
    "score": _score_parser,
    "validate": _validate_parser,
    "profiles": _profiles_parser,
    "normalize-qrels": _normalize_qrels_parser,
    "register": _register_parser,
    "compare": _compare_parser,
    "fuse": _fuse_parser,
    "plots": _plots_parser,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; with ``command``, only that command's (building all of them is most
    of a small command's argument parsing, about 12 ms a process)."""
    parser = argparse.ArgumentParser(
        prog="skillret-eval",
        description="Retrieval evaluation for agent skills, exact to SkillRet's official numbers.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in _PARSERS.items():
        if command is None or name == command:
            add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv and argv[0] in _PARSERS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    return guarded(lambda: _limited(args))


def _limited(args) -> int:
    """The command, under the input limits its options set."""
    from skillret.limits import applied
    with applied(json_depth=getattr(args, "max_json_depth", None),
                 input_bytes=getattr(args, "max_input_size", None),
                 results_per_query=getattr(args, "max_results_per_query", None)):
        return _COMMANDS[args.command](args)


def _cmd_score(args) -> int:
    from skillret.cli import commands
    return commands.score_command(args)


def _cmd_validate(args) -> int:
    from skillret.cli import commands
    return commands.validate_command(args)


def _cmd_profiles(args) -> int:
    from skillret.cli import commands
    return commands.profiles_command(args)


def _cmd_normalize(args) -> int:
    from skillret.cli import commands
    return commands.normalize_qrels_command(args)


def _cmd_register(args) -> int:
    from skillret.cli import commands
    return commands.register_command(args)


def _cmd_compare(args) -> int:
    from skillret.analysis import compare
    return compare.command(args)


def _cmd_fuse(args) -> int:
    from skillret.cli.fuse import fuse_command
    return fuse_command(args)


def _cmd_plots(args) -> int:
    from skillret.cli.plots import plots_command
    return plots_command(args)


_COMMANDS = {"score": _cmd_score, "validate": _cmd_validate, "profiles": _cmd_profiles,
             "normalize-qrels": _cmd_normalize, "register": _cmd_register,
             "compare": _cmd_compare, "fuse": _cmd_fuse, "plots": _cmd_plots}


def run() -> None:
    """The ``skillret-eval`` console script: :func:`main`, then exit with its status.

    Before exiting, what the command left in memory is frozen (``gc.freeze``): the interpreter's
    last garbage collection then skips it. That collection only tears down (the outputs are
    written and renamed, standard output flushed), and it was 16 ms of a 0.24 s process scoring
    439k rows (docs/benchmarks.md). In-process callers of :func:`main` (tests, notebooks) keep
    their collector as it is.
    """
    status = main()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
