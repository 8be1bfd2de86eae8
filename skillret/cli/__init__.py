"""The command line, `skillret-eval`; argument parsing lives here (and in `stages/`)."""

from skillret.cli.app import main, run

__all__ = ["main", "run"]
