"""Stage fuse@<name>: the fused run <name> of params.yaml's `fuse` section, written as TREC."""

import sys

from skillret.cli.stage import main
from skillret.pipeline import layout
from skillret.pipeline.fused_runs import fuse_from_params


def fuse(args) -> None:
    notices: list[str] = []
    fuse_from_params(layout.PARAMS, args.name, layout.FUSED_RUN.format(args.name),
                     run_pattern=layout.CANONICAL_RUN, notices=notices)
    for notice in notices:  # the fused run's line is score_fused@<name>'s
        print(f"fuse@{args.name}: note: {notice}", file=sys.stderr)


if __name__ == "__main__":
    main(__doc__, fuse, "fuse@{name}",
         ("name", {"metavar": "NAME", "help": "a name under fuse: in params.yaml"}))
