"""Stage breakdown_plot: every registered run's breakdown (the `breakdown` key of its metrics
file, see eval.breakdown) as one plot file, so `dvc plots show` draws the runs side by side.
"""

import sys

from skillret.cli import stages

if __name__ == "__main__":
    sys.exit(stages.breakdown_plot(doc=__doc__))
