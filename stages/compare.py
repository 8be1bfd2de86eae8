"""Stage compare, every registered and fused run together: paired significance tests against
`compare.baseline`, from the per-query tables the score stages wrote; then the headline, the
query reports and the data of the charts over every run.

    python -m stages.compare      # outputs/per_query/*.tsv, metrics/runs/*.json -> metrics/...

Reads the names under `runs` and `fuse`, the `compare` section and `eval` (headline, breakdown)
from params.yaml. Writes metrics/compare.json (every test), reports/compare.md (the report, with
the tests within strata), metrics/headline.json (per run: the headline metrics, and the delta
and significance of the first against the baseline: what dvc metrics and dvc exp show display),
reports/queries/<run>.md (each run's largest per-query changes against the baseline),
plots/curves.json (every run's curves, each record naming its run) and plots/breakdown.json
(every run's breakdown), all only after every table was read and every test done. Prints one
line per run.
"""

from skillret.cli import stages

if __name__ == "__main__":
    stages.finish(stages.compare(doc=__doc__))
