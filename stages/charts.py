"""Stage charts: every registered and fused run's metric-vs-K records (plots/curves.json) and
breakdowns (plots/breakdown.json), for `dvc plots show`."""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline import project_stages

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.partition("\n\n")[0]).parse_args()
    finish(guarded(project_stages.charts, prog="charts"))
