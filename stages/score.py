"""Stage score@<run>: validate one registered run against the canonical qrels, then score it.

    python -m stages.score NAME             # score_fused@NAME: python -m stages.score NAME --fused

Reads `runs.<NAME>` and `run_options.<NAME>` (the file, and how to read it), `validate.strict`
and `eval` from params.yaml. Writes the canonical run, the validation report (with its counts
and the metric contract), the metrics, per-query values and plot data (paths:
skillret.pipeline.layout), all computed before any is replaced: a failing run exits 2 with one
line and leaves every previous output as it was. Prints one line: the headline metrics and the
warnings' count.
"""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline import run_stages

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("name", metavar="RUN", help="a name under runs: (or, with --fused, "
                                                    "under fuse:) in params.yaml")
    parser.add_argument("--fused", action="store_true", help="RUN is a fused run (fuse.<name>)")
    args = parser.parse_args()
    finish(guarded(lambda: run_stages.score(args.name, fused=args.fused),
                   prog=f"score@{args.name}"))
