"""Stage score@<run>: validate one registered run against the canonical qrels, then score it."""

from skillret.cli.guard import stage
from skillret.pipeline import run_stages

if __name__ == "__main__":
    stage(__doc__, lambda args: run_stages.score(args.name, fused=args.fused), "score@{name}",
         ("name", {"metavar": "RUN", "help": "a name under runs: (or, with --fused, under "
                                             "fuse:) in params.yaml"}),
         ("--fused", {"action": "store_true", "help": "RUN is a fused run (fuse.<name>)"}))
