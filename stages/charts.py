"""Stage charts: every registered and fused run's metric-vs-K records (plots/curves.json) and
breakdowns (plots/breakdown.json), for `dvc plots show`."""

from skillret.cli.guard import stage
from skillret.pipeline import project_stages

if __name__ == "__main__":
    stage(__doc__, lambda args: project_stages.charts(), "charts")
