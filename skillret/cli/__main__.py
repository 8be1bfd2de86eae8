"""`python -m skillret.cli`: the same as the `skillret-eval` console script."""

from skillret.cli import run

run()
