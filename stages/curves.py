"""Stage curves: every registered and fused run's metric-vs-K records in one file, each record
naming its run, for the chart that overlays every run (dvc.yaml's top-level plot).

Reads the names under `runs` and `fuse` from params.yaml.
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
    parser.add_argument("--runs", required=True, help="folder of per-run plot files")
    parser.add_argument("--output", required=True, help="all runs' records (JSON)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline.params import check_name, load_yaml
        from skillret.pipeline.steps import collect_curves

        params = load_yaml(args.params)
        runs = [*(params.get("runs") or {}), *(params.get("fuse") or {})]
        collect_curves(args.runs, args.output, [check_name(name) for name in runs])

    return guarded(work, prog="curves")


if __name__ == "__main__":
    sys.exit(main())
