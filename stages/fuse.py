"""Stage fuse@<name>: the fused run <name> of params.yaml's `fuse` section, written as TREC."""

import argparse
import sys

from skillret.cli.guard import finish, guarded
from skillret.pipeline import layout
from skillret.pipeline.fused_runs import fuse_from_params

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("name", metavar="NAME", help="a name under fuse: in params.yaml")
    args = parser.parse_args()
    notices: list[str] = []

    def fuse():
        fuse_from_params(layout.PARAMS, args.name, layout.FUSED_RUN.format(args.name),
                         run_pattern=layout.CANONICAL_RUN, notices=notices)
        for notice in notices:  # the fused run's line is score_fused@<name>'s
            print(f"fuse@{args.name}: note: {notice}", file=sys.stderr)

    finish(guarded(fuse, prog=f"fuse@{args.name}"))
