"""Stage fuse@<name>: the fused run <name> of params.yaml's `fuse` section, written as TREC.

    python stages/fuse.py --name NAME --runs outputs/runs/{}.parquet --output outputs/fused/NAME.trec

Reads `fuse` (every entry: a fused run may fuse fused runs, which are computed on the way) and
`runs` (a fused name may not be a registered one). The registered runs are read from their
validated canonical files (`--runs`, {} standing for the run's name).
"""

from __future__ import annotations

import os
import sys

# Import the skillret of the tree this script is in, whatever is installed (see stages/score.py).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402

from skillret.cli.guard import guarded  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--name", required=True, help="a name under fuse: in params.yaml")
    parser.add_argument("--runs", required=True, metavar="PATTERN",
                        help="where a registered run's canonical file is, {} for its name")
    parser.add_argument("--output", required=True, metavar="PATH")
    args = parser.parse_args(argv)

    def work():
        from skillret.cli.fuse import describe, fuse_from_params

        notices: list[str] = []
        fusion, names, counts = fuse_from_params(args.params, args.name, args.output,
                                                 run_pattern=args.runs, notices=notices)
        for notice in notices:
            print(f"fuse@{args.name}: note: {notice}", file=sys.stderr)
        print(f"{args.name}: {describe(fusion, names)}: {counts['queries']} queries, "
              f"{counts['rows']} results -> {args.output}")

    return guarded(work, prog=f"fuse@{args.name}")


if __name__ == "__main__":
    sys.exit(main())
