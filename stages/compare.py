"""Stage compare: paired significance tests of every registered and fused run against
`compare.baseline`, from the per-query tables the score stages wrote; then the headline.

    python -m stages.compare      # outputs/per_query/*.tsv, metrics/runs/*.json -> metrics/...

Reads the names under `runs` and `fuse`, the `compare` section and `eval` (headline, breakdown)
from params.yaml. Writes metrics/compare.json (every test), reports/compare.md (the report, with
the tests within strata) and metrics/headline.json (per run: the headline metrics, and the delta
and significance of the first against the baseline: what dvc metrics and dvc exp show display),
all only after every table was read and every test done. Prints one line per run.
"""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline import project_stages

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.partition("\n\n")[0]).parse_args()
    finish(guarded(project_stages.compare, prog="compare"))
