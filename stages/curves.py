"""Stage curves: every registered and fused run's metric-vs-K records in one file, each record
naming its run, for the chart that overlays every run (dvc.yaml's top-level plot).

Reads the names under `runs` and `fuse` from params.yaml.
"""

import sys

from skillret.cli import stages

if __name__ == "__main__":
    sys.exit(stages.curves(doc=__doc__))
