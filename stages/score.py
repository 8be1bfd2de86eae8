"""Stage score@<run>: validate one registered run against the canonical qrels, then score it."""

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
