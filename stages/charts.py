"""Stage charts: the data of the charts over every registered and fused run, one file per
chart: every run's metric-vs-K records, each naming its run (plots/curves.json, dvc.yaml's
top-level plot), and every run's breakdown (the `breakdown` key of its metrics file, see
eval.breakdown; plots/breakdown.json), so `dvc plots show` draws the runs side by side.

Reads the run names from params.yaml (`runs`, `fuse`).
"""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline import project_stages

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.partition("\n\n")[0]).parse_args()
    finish(guarded(project_stages.charts, prog="charts"))
