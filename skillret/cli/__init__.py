"""The command line, `skillret-eval`: the parser, and the dispatch to the module of each
command; argument parsing lives here (and in `stages/`).

A command's module is imported only when it runs, so `--help` and argument errors answer at
once.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from skillret import __version__, limits
import skillret.cli.arguments as arguments
from skillret.cli.guard import EXIT_BAD_INPUT, finish, guarded
from skillret.io.streams import one_stdin

#: the options that name files to read (any of them may be `-`, standard input: one at most)
INPUTS = ("qrels", "run", "params", "facets", "skills", "query_texts")


#: each command and its module: `normalize-qrels` runs `skillret.cli.project.normalize_qrels`,
#: its arguments from `skillret.cli.arguments.normalize_qrels`
COMMANDS = {"score": "score", "validate": "score", "profiles": "project", "measures": "measures",
            "normalize-qrels": "project", "register": "project", "unregister": "project",
            "compare": "compare", "fuse": "compare", "plots": "plots", "report": "compare",
            "queries": "compare"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; with `command`, only that command's."""
    parser = argparse.ArgumentParser(
        prog="skillret-eval",
        description="Retrieval evaluation for agent skills, exact to SkillRet's official numbers.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if command is None or name == command:
            getattr(arguments, name.replace("-", "_"))(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    return guarded(lambda: _run(args))


def _run(args) -> int:
    """The command, under the input limits its options set."""
    one_stdin({f"--{dest.replace('_', '-')}": getattr(args, dest, None) for dest in INPUTS})
    with limits.applied(json_depth=getattr(args, "max_json_depth", None),
                        input_bytes=getattr(args, "max_input_size", None),
                        results_per_query=getattr(args, "max_results_per_query", None)):
        module = importlib.import_module(f"skillret.cli.{COMMANDS[args.command]}")
        return getattr(module, args.command.replace("-", "_"))(args)


def run() -> None:
    """The `skillret-eval` console script: `main`, then exit with its status."""
    finish(main())
