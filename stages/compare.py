"""Stage compare: paired significance tests of every registered and fused run against
`compare.baseline`, from the per-query tables the score stages wrote.

    python -m stages.compare --per-query outputs/per_query --output metrics/compare.json         --markdown reports/compare.md

Reads the names under `runs` and `fuse` and the `compare` section from params.yaml. Writes both
outputs only after every table was read and every test done.
"""

import sys

from skillret.cli import stages

if __name__ == "__main__":
    sys.exit(stages.compare(doc=__doc__))
