"""Stage compare: paired significance tests of every registered and fused run against
`compare.baseline`, from the per-query tables the score stages wrote.

    python -m stages.compare --per-query outputs/per_query --output metrics/compare.json \
        --markdown reports/compare.md --qrels outputs/qrels.tsv --queries reports/queries \
        --canonical outputs/runs/{}.parquet --canonical outputs/fused/{}.parquet

Reads the names under `runs` and `fuse` and the `compare` section from params.yaml. Writes its
outputs (with --queries, reports/queries/<run>.md: each run's largest per-query changes against
the baseline) only after every table was read and every test done.
"""

import sys

from skillret.cli import stages

if __name__ == "__main__":
    sys.exit(stages.compare(doc=__doc__))
