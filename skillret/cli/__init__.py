"""The command line, `skillret-eval` and the pipeline's stage entry points: argument parsing
lives here and only here; each command hands its options to the library and prints the result.
"""

from skillret.cli.app import main, run

__all__ = ["main", "run"]
