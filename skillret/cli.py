"""``skillret-eval``: score, validate, list profiles, normalize qrels.

Bad input ends with one line on stderr naming the file (and line), exit status 2, no traceback
and no output file. Heavy modules (numpy, pyarrow, pandas) are imported inside the commands, so
``--help`` and argument errors return at once.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import __version__

EXIT_BAD_INPUT = 2


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skillret-eval",
        description="Retrieval evaluation for agent skills, exact to SkillRet's official numbers.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("score", help="compute a run's metrics under one or more profiles")
    _add_inputs(p)
    p.add_argument("--profile", action="append", metavar="NAME",
                   help="profile to compute (repeatable; default: official, or eval.profiles "
                        "from --params)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the metrics as JSON")
    p.add_argument("--per-query", metavar="FILE",
                   help="write per-query values (TSV; .parquet for Parquet)")
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the table")

    p = sub.add_parser("validate", help="check a run against the qrels before scoring it")
    _add_inputs(p)
    p.add_argument("--report", metavar="FILE", help="write the validation report as JSON")
    p.add_argument("--normalized", metavar="FILE",
                   help="write the canonical run (Parquet) when validation passes")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.add_argument("--depth", type=int, metavar="K",
                   help="largest cutoff in use (default: from the profiles, 15)")

    p = sub.add_parser("profiles", help="list the profiles and the definitions of the measures")
    p.add_argument("--params", metavar="FILE", help="also list the profiles defined there")
    p.add_argument("--json", action="store_true", help="print as JSON")

    p = sub.add_parser("normalize-qrels", help="write qrels in canonical form, with statistics")
    p.add_argument("--qrels", required=True, metavar="PATH")
    p.add_argument("--qrels-format", metavar="FMT")
    p.add_argument("--split", metavar="NAME")
    p.add_argument("--columns", metavar="SPEC")
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="canonical qrels (TSV: query_id, skill_id, relevance)")
    p.add_argument("--stats", metavar="FILE", help="write qrels statistics as JSON")

    p = sub.add_parser("register", help="add run files to params.yaml's runs: (name = file stem)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="run files inside the project")
    p.add_argument("--params", default="params.yaml", metavar="FILE",
                   help="the params file to edit (default: params.yaml)")
    p.add_argument("--name", metavar="NAME", help="the run's name (one file only)")
    p.add_argument("--format", dest="run_format", metavar="FMT",
                   help="written under run_options.<name>.format")
    p.add_argument("--columns", metavar="SPEC", help="written under run_options.<name>.columns")
    p.add_argument("--split", metavar="NAME", help="written under run_options.<name>.split")
    return parser


def lean_pyarrow() -> None:
    """Keep pandas out of a scoring process.

    On its first conversion pyarrow probes for pandas and, when it is installed, imports it
    (about 0.25 s, a quarter of scoring a million rows). The CLI and the stages never hand pyarrow
    a pandas object, so the probe is made to fail once. Code that needs pandas later still gets
    it: pyarrow imports pandas again whenever an operation requires it.
    """
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    class NoPandas:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.partition(".")[0] == "pandas":
                raise ImportError("pandas is not needed here")

    sys.meta_path.insert(0, NoPandas)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(NoPandas)


def single_threaded_blas() -> None:
    """Keep OpenBLAS from starting a thread per core.

    numpy's OpenBLAS starts its threads when numpy is imported, and they spin for a while
    whenever numpy calls into it: on two cores that took 3% of scoring 10M rows, with no linear
    algebra anywhere. A user's own setting is kept.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def guarded(work, prog: str = "skillret-eval") -> int:
    """Run ``work()`` in a lean process; bad input becomes one line on stderr and exit status 2."""
    from .errors import SkillretError
    single_threaded_blas()
    lean_pyarrow()
    try:
        result = work()
    except SkillretError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    return 0 if result is None else int(result)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    return guarded(lambda: _COMMANDS[args.command](args))


def _cmd_score(args) -> int:
    from . import commands
    return commands.score_command(args)


def _cmd_validate(args) -> int:
    from . import commands
    return commands.validate_command(args)


def _cmd_profiles(args) -> int:
    from . import commands
    return commands.profiles_command(args)


def _cmd_normalize(args) -> int:
    from . import commands
    return commands.normalize_qrels_command(args)


def _cmd_register(args) -> int:
    from . import commands
    return commands.register_command(args)


_COMMANDS = {"score": _cmd_score, "validate": _cmd_validate, "profiles": _cmd_profiles,
             "normalize-qrels": _cmd_normalize, "register": _cmd_register}


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
