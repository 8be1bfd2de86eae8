"""``skillret-eval``: the parser and the dispatch to one module per command.

Each command is a module of this package with ``add_parser(sub)`` and ``command(args)``; only
the invoked command's module is imported. Bad input ends with one line on stderr naming the file
(and line), exit status 2, no traceback and no output changed (:mod:`skillret.cli.guard`). Heavy
modules (numpy, pyarrow, pandas) are imported inside the commands, so ``--help`` and argument
errors return at once.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from skillret import __version__
from skillret.cli.guard import EXIT_BAD_INPUT, finish, guarded

__all__ = ["main", "run", "build_parser", "COMMANDS"]

# command -> its module in skillret.cli
COMMANDS = {
    "score": "score",
    "validate": "validate",
    "profiles": "profiles",
    "normalize-qrels": "normalize_qrels",
    "register": "register",
    "compare": "compare",
    "fuse": "fuse",
    "plots": "plots",
    "report": "report",
    "queries": "queries",
}


def _module(command: str):
    return importlib.import_module(f"skillret.cli.{COMMANDS[command]}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; with ``command``, only that command's (building all of them is most
    of a small command's argument parsing, about 12 ms a process)."""
    parser = argparse.ArgumentParser(
        prog="skillret-eval",
        description="Retrieval evaluation for agent skills, exact to SkillRet's official numbers.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if command is None or name == command:
            _module(name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
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
        return _module(args.command).command(args)


def run() -> None:
    """The ``skillret-eval`` console script: :func:`main`, then exit with its status
    (:func:`~skillret.cli.guard.finish`)."""
    finish(main())


if __name__ == "__main__":  # pragma: no cover
    run()
